package dev.parley.chat.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.RunEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A client that follows a run to its end through several engines ("instances"), dropping its subscription
 * after a few events and reconnecting from its cursor to a random instance, checking that every event
 * arrives exactly once, in order.
 */
public final class RunFollower {
    private RunFollower() {
    }

    /** Every event of the run, from seq 1 to the terminal event. */
    public static List<RunEvent> follow(List<ChatEngine> instances, String ownerId, String runId, Random random,
            int maxPauseMillis) {
        List<RunEvent> received = new ArrayList<>();
        long cursor = 0;
        while (received.isEmpty() || !received.get(received.size() - 1).event().isTerminal()) {
            ChatEngine via = instances.get(random.nextInt(instances.size()));
            EventCollector part = EventCollector.unbounded().subscribeTo(via.subscribe(ownerId, runId, cursor));
            try {
                part.awaitCount(1);
            } catch (AssertionError e) {
                throw new AssertionError("following run " + runId + " through instance " + instances.indexOf(via)
                        + " after seq " + cursor + ": " + e.getMessage(), e);
            }
            try {
                Thread.sleep(random.nextInt(maxPauseMillis));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            part.cancel();
            for (RunEvent event : part.events()) {
                assertThat(event.seq()).as("no gap, no duplicate").isEqualTo(cursor + 1);
                cursor = event.seq();
                received.add(event);
                if (event.event().isTerminal()) {
                    break;
                }
            }
        }
        return received;
    }
}
