package dev.parley.chat.engine.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.store.StoreBatch;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The resume point a batch carries never says more than the batch's events (and the ones before) hold,
 * nor less, however the runtime's items, its tokens and the batches fall.
 */
class ResumeTrackerTest {

    private static List<StoreBatch.ResumePoint> handOver(ResumeTracker tracker, long lastSeq) {
        StoreBatch.Builder batch = StoreBatch.builder();
        tracker.handOver(batch, lastSeq);
        return batch.build().resumePoints();
    }

    private static StoreBatch.ResumePoint point(String token, long skip) {
        return new StoreBatch.ResumePoint("r", token, skip);
    }

    @Test
    void aBatchCarriesThePointItsEventsReachNotOneAhead() {
        ResumeTracker tracker = new ResumeTracker("r", true, 0);
        tracker.resumePoint("0", 2);
        tracker.handled(3);
        tracker.resumePoint("1", 3);
        tracker.handled(4);
        tracker.handled(5);
        tracker.resumePoint("2", 5);

        assertThat(handOver(tracker, 1)).as("the events before the first point").isEmpty();
        assertThat(handOver(tracker, 4)).as("frame 2 is half stored").containsExactly(point("1", 1));
        assertThat(handOver(tracker, 4)).as("nothing new").isEmpty();
        assertThat(handOver(tracker, 5)).containsExactly(point("2", 0));
    }

    @Test
    void aPointReachedAfterTheEventsWereHandedOverGoesWithTheNextBatchEvenWithoutEvents() {
        ResumeTracker tracker = new ResumeTracker("r", true, 0);
        tracker.resumePoint("0", 2);
        tracker.handled(3);
        assertThat(handOver(tracker, 3)).containsExactly(point("0", 1));
        tracker.resumePoint("1", 3);
        assertThat(handOver(tracker, 0)).containsExactly(point("1", 0));
    }

    @Test
    void itemsLeftOutCountLikeLoggedOnes() {
        ResumeTracker tracker = new ResumeTracker("r", true, 0);
        tracker.resumePoint("0", 2);
        tracker.handled(2);
        tracker.handled(3);
        assertThat(handOver(tracker, 3)).containsExactly(point("0", 2));
    }

    /**
     * A re-attached stream after ("4", 3): the runtime replays frame 5 (one item) and its token, then frame 6
     * (two items). The point after token 5 still has two stored items ahead of it; once they are skipped and a
     * new item is logged, it counts on from there.
     */
    @Test
    void aReattachedStreamSkipsWhatIsStoredAndAPointAmidTheSkippedItemsKeepsThemCounted() {
        ResumeTracker tracker = new ResumeTracker("r", true, 9);
        tracker.resumeAt("4", 3);
        assertThat(tracker.skipStored()).isTrue();
        tracker.resumePoint("5", 9);
        assertThat(handOver(tracker, 0)).containsExactly(point("5", 2));
        assertThat(tracker.skipStored()).isTrue();
        assertThat(tracker.skipStored()).isTrue();
        assertThat(tracker.skipStored()).as("the first new item").isFalse();
        tracker.handled(4097);
        tracker.resumePoint("6", 4097);
        assertThat(handOver(tracker, 0)).as("not before its event is stored").isEmpty();
        assertThat(handOver(tracker, 4097)).containsExactly(point("6", 0));
    }

    @Test
    void theStartingPointOfAReattachedStreamIsNotStoredAgain() {
        ResumeTracker tracker = new ResumeTracker("r", true, 9);
        tracker.resumeAt("4", 0);
        tracker.resumePoint("4", 9);
        assertThat(handOver(tracker, 0)).isEmpty();
    }

    @Test
    void itemsBeforeTheFirstTokenAreNotCounted() {
        ResumeTracker tracker = new ResumeTracker("r", true, 0);
        tracker.handled(3);
        assertThat(tracker.followable()).isFalse();
        assertThat(handOver(tracker, 3)).isEmpty();
    }

    /**
     * A runtime that cannot re-attach: the token names the run there (a skip means nothing); only a new token
     * is news, and items do not cost a point each.
     */
    @Test
    void withoutReattachOnlyANewTokenIsStored() {
        ResumeTracker tracker = new ResumeTracker("r", false, 0);
        tracker.resumePoint("run-7", 2);
        tracker.handled(3);
        assertThat(handOver(tracker, 3)).containsExactly(new StoreBatch.ResumePoint("r", "run-7", 0, false));
        assertThat(tracker.followable()).as("the token names the run; nobody re-attaches there").isFalse();
        tracker.handled(4);
        tracker.handled(5);
        assertThat(handOver(tracker, 5)).isEmpty();
        tracker.resumePoint("run-8", 5);
        assertThat(handOver(tracker, 5)).containsExactly(new StoreBatch.ResumePoint("r", "run-8", 0, false));
    }
}
