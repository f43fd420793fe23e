package dev.parley.chat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.testing.Await;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ChatStore} that keeps attachments ({@link AttachmentStore}) must have: uploads
 * recorded per thread, an owner's equal bytes sharing one blob, a blob freed with the last attachment that
 * uses it (and never reused after), and saves racing deletes without a lost or an extra use. A store module
 * extends this class once per database and returns a fresh, empty store from {@link #createStore()}.
 */
public abstract class AttachmentStoreContract {
    protected static final Instant T0 = Instant.parse("2026-11-29T10:00:00.000Z");
    /** Enough to list every blob a test frees. */
    private static final int ALL = 10_000;

    protected ChatStore chatStore;
    protected AttachmentStore store;

    /** A new store with no data in it, implementing {@link AttachmentStore}. */
    protected abstract ChatStore createStore();

    @BeforeEach
    void openStore() {
        chatStore = createStore();
        assertThat(chatStore).as("the store keeps attachments").isInstanceOf(AttachmentStore.class);
        store = (AttachmentStore) chatStore;
    }

    @AfterEach
    void closeStore() {
        chatStore.close();
    }

    protected void thread(String id, String owner) {
        chatStore.createThread(new ChatThread(id, owner, null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
    }

    /** An upload whose bytes are told apart by {@code content} (its SHA-256 stands for it), stored under {@code key}. */
    protected static Attachment attachment(String id, String owner, String threadId, String content, String key) {
        return new Attachment(id, owner, threadId, id + ".txt", "text/plain", 100 + content.length(),
                "sha-" + content, key, T0.plusSeconds(id.length()));
    }

    private List<String> unreferenced() {
        return store.unreferencedBlobs(ALL);
    }

    @Test
    void anAttachmentIsFoundAsItWasSaved() {
        thread("t1", "alice");
        Attachment saved = store.saveAttachment(attachment("a1", "alice", "t1", "report", "k1"));
        assertThat(saved).isEqualTo(attachment("a1", "alice", "t1", "report", "k1"));
        assertThat(store.findAttachment("a1")).contains(saved);
        assertThat(store.findAttachment("nope")).isEmpty();
        Attachment other = store.saveAttachment(attachment("a2", "alice", "t1", "photo", "k2"));
        assertThat(store.findAttachments(List.of("a2", "nope", "a1"))).containsExactlyInAnyOrder(saved, other);
        assertThat(store.findAttachments(List.of())).isEmpty();
        assertThat(unreferenced()).isEmpty();
    }

    @Test
    void anOwnersEqualBytesShareOneBlobAndAnotherOwnersDoNot() {
        thread("t1", "alice");
        thread("t2", "alice");
        thread("b1", "bob");
        store.saveAttachment(attachment("a1", "alice", "t1", "report", "k1"));

        Attachment again = store.saveAttachment(attachment("a2", "alice", "t2", "report", "k2"));
        assertThat(again.blobKey()).as("the owner's blob of these bytes").isEqualTo("k1");
        assertThat(again.id()).isEqualTo("a2");
        assertThat(store.findAttachment("a2")).map(Attachment::blobKey).contains("k1");
        assertThat(store.saveAttachment(attachment("a3", "alice", "t1", "other bytes", "k3")).blobKey())
                .isEqualTo("k3");
        assertThat(store.saveAttachment(attachment("b1", "bob", "b1", "report", "k4")).blobKey())
                .as("bob's equal bytes are his own blob").isEqualTo("k4");
    }

    @Test
    void anAttachmentOfAMissingThreadIsNotFoundAndLeavesNothing() {
        assertThatThrownBy(() -> store.saveAttachment(attachment("a1", "alice", "nope", "report", "k1")))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThat(store.findAttachment("a1")).isEmpty();
        assertThat(store.storedAttachmentBytes("alice")).isZero();
        thread("t1", "alice");
        assertThat(store.saveAttachment(attachment("a2", "alice", "t1", "report", "k2")).blobKey())
                .as("no blob of the refused attachment was kept to be shared").isEqualTo("k2");
    }

    @Test
    void aTakenIdIsAConflictAndAddsNoUse() {
        thread("t1", "alice");
        thread("t2", "alice");
        store.saveAttachment(attachment("a1", "alice", "t1", "report", "k1"));
        assertThatThrownBy(() -> store.saveAttachment(attachment("a1", "alice", "t2", "report", "k2")))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(store.findAttachment("a1")).map(Attachment::threadId).contains("t1");

        assertThat(chatStore.deleteThread("t1")).isTrue();
        assertThat(unreferenced()).as("the refused save added no use to the blob").containsExactly("k1");
    }

    @Test
    void aSharedBlobIsKeptWhileAThreadUsesItAndFreedWithTheLast() {
        thread("t1", "alice");
        thread("t2", "alice");
        store.saveAttachment(attachment("a1", "alice", "t1", "report", "k1"));
        store.saveAttachment(attachment("a2", "alice", "t1", "report", "k2"));
        store.saveAttachment(attachment("a3", "alice", "t2", "report", "k3"));
        store.saveAttachment(attachment("a4", "alice", "t1", "own", "k4"));

        assertThat(chatStore.deleteThread("t1")).isTrue();
        assertThat(store.findAttachments(List.of("a1", "a2", "a4"))).as("the thread's attachments go with it")
                .isEmpty();
        assertThat(unreferenced()).as("k1 is still used by t2").containsExactly("k4");
        assertThat(store.findAttachment("a3")).map(Attachment::blobKey).contains("k1");

        assertThat(chatStore.deleteThread("t2")).isTrue();
        assertThat(unreferenced()).containsExactlyInAnyOrder("k1", "k4");
        store.forgetBlobs(List.of("k4"));
        assertThat(unreferenced()).containsExactly("k1");
        store.forgetBlobs(List.of("k1", "never-listed"));
        assertThat(unreferenced()).isEmpty();
        store.forgetBlobs(List.of());
        assertThat(chatStore.deleteThread("t2")).as("deleting again frees nothing").isFalse();
        assertThat(unreferenced()).isEmpty();
    }

    @Test
    void aFreedBlobIsNeverUsedAgain() {
        thread("t1", "alice");
        store.saveAttachment(attachment("a1", "alice", "t1", "report", "k1"));
        chatStore.deleteThread("t1");
        thread("t2", "alice");
        assertThat(store.saveAttachment(attachment("a2", "alice", "t2", "report", "k2")).blobKey())
                .as("k1 waits to be deleted from the blob store").isEqualTo("k2");
        assertThat(store.saveAttachment(attachment("a3", "alice", "t2", "report", "k3")).blobKey()).isEqualTo("k2");
        assertThat(unreferenced()).containsExactly("k1");
    }

    @Test
    void unreferencedBlobsAreListedOldestFirstUpToTheLimit() throws InterruptedException {
        List<String> freedInOrder = List.of("k9", "k5", "k7");
        for (String key : freedInOrder) {
            thread("t-" + key, "alice");
            store.saveAttachment(attachment("a-" + key, "alice", "t-" + key, key, key));
        }
        for (String key : freedInOrder) {
            chatStore.deleteThread("t-" + key);
            Thread.sleep(3);
        }
        assertThat(unreferenced()).containsExactlyElementsOf(freedInOrder);
        assertThat(store.unreferencedBlobs(2)).containsExactly("k9", "k5");
        assertThat(store.unreferencedBlobs(0)).isEmpty();
    }

    @Test
    void storedBytesCountEachOfTheOwnersBlobsOnce() {
        thread("t1", "alice");
        thread("t2", "alice");
        thread("b1", "bob");
        assertThat(store.storedAttachmentBytes("alice")).isZero();
        long report = store.saveAttachment(attachment("a1", "alice", "t1", "report", "k1")).size();
        store.saveAttachment(attachment("a2", "alice", "t2", "report", "k2"));
        store.saveAttachment(attachment("a3", "alice", "t1", "report", "k3"));
        long photo = store.saveAttachment(attachment("a4", "alice", "t1", "photo", "k4")).size();
        long bobs = store.saveAttachment(attachment("b1", "bob", "b1", "report", "k5")).size();
        assertThat(store.storedAttachmentBytes("alice")).isEqualTo(report + photo);
        assertThat(store.storedAttachmentBytes("bob")).isEqualTo(bobs);

        chatStore.deleteThread("t1");
        assertThat(store.storedAttachmentBytes("alice")).as("the report is still used by t2").isEqualTo(report);
        chatStore.deleteThread("t2");
        assertThat(store.storedAttachmentBytes("alice")).as("freed blobs are not counted").isZero();
        assertThat(store.storedAttachmentBytes("bob")).isEqualTo(bobs);
    }

    /**
     * An attachment reusing a blob while the thread that held it is deleted: either the save comes first and
     * the blob stays in use, or the delete does and the save gets a blob of its own; never an attachment
     * pointing at a freed blob, and no use lost or counted twice (deleting the keeping threads at the end frees
     * exactly the blobs they used).
     */
    @Test
    void aSaveReusingABlobRacingTheDeleteOfItsHolderNeverPointsAtAFreedBlob() throws Exception {
        int rounds = 40;
        Set<String> expectedFreed = new HashSet<>();
        Set<Boolean> outcomes = new HashSet<>();
        long bytes = 0;
        for (int i = 0; i < rounds; i++) {
            String content = "race-" + i;
            thread("holder-" + i, "alice");
            thread("keeper-" + i, "alice");
            store.saveAttachment(attachment("h-" + i, "alice", "holder-" + i, content, "kh-" + i));
            String holder = "holder-" + i;
            Attachment reusing = attachment("r-" + i, "alice", "keeper-" + i, content, "kr-" + i);
            List<Object> results = Await.race(2, n -> n == 0 ? (Object) store.saveAttachment(reusing)
                    : (Object) chatStore.deleteThread(holder));
            Attachment saved = (Attachment) results.get(0);
            assertThat(results.get(1)).isEqualTo(true);
            assertThat(saved.blobKey()).as("round %d", i).isIn("kh-" + i, "kr-" + i);
            assertThat(store.findAttachment("r-" + i)).map(Attachment::blobKey).contains(saved.blobKey());
            boolean reused = saved.blobKey().equals("kh-" + i);
            outcomes.add(reused);
            List<String> unreferenced = unreferenced();
            if (reused) {
                assertThat(unreferenced).as("round %d: the reused blob is in use", i).doesNotContain("kh-" + i);
            } else {
                assertThat(unreferenced).as("round %d: the holder's blob was freed", i).contains("kh-" + i);
                expectedFreed.add("kh-" + i);
            }
            assertThat(unreferenced).doesNotContain("kr-" + i);
            expectedFreed.add(saved.blobKey());
            bytes += saved.size();
            assertThat(store.storedAttachmentBytes("alice")).as("round %d", i).isEqualTo(bytes);
        }
        for (int i = 0; i < rounds; i++) {
            chatStore.deleteThread("keeper-" + i);
        }
        assertThat(unreferenced()).containsExactlyInAnyOrderElementsOf(expectedFreed);
        assertThat(store.storedAttachmentBytes("alice")).isZero();
        System.out.println("reuse race outcomes seen (true: the save came first): " + outcomes);
    }

    /**
     * An attachment saved to a thread while that thread is deleted: either the save comes first and its use
     * goes with the thread, or it finds the thread gone (NOT_FOUND). Either way the blob is freed: no use of a
     * deleted thread is left behind to keep it.
     */
    @Test
    void aSaveRacingTheDeleteOfItsOwnThreadLeavesNoUseBehind() throws Exception {
        int rounds = 40;
        List<Object> outcomes = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            String threadId = "doomed-" + i;
            thread(threadId, "alice");
            store.saveAttachment(attachment("h-" + i, "alice", threadId, "doomed-" + i, "kh-" + i));
            Attachment late = attachment("x-" + i, "alice", threadId, "doomed-" + i, "kx-" + i);
            List<Object> results = Await.race(2, n -> {
                if (n == 1) {
                    return chatStore.deleteThread(threadId);
                }
                try {
                    return store.saveAttachment(late).blobKey();
                } catch (ChatException e) {
                    return e.code();
                }
            });
            assertThat(results.get(0)).as("round %d", i).isIn("kh-" + i, ErrorCode.NOT_FOUND);
            outcomes.add(results.get(0) instanceof String);
            assertThat(results.get(1)).isEqualTo(true);
            assertThat(store.findAttachment("x-" + i)).isEmpty();
            assertThat(unreferenced()).as("round %d", i).contains("kh-" + i).doesNotContain("kx-" + i);
            assertThat(store.storedAttachmentBytes("alice")).as("round %d", i).isZero();
        }
        System.out.println("own-thread race outcomes seen (true: the save came first): " + new HashSet<>(outcomes));
    }
}
