package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.io.IOException;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The faults a simulation injects, drawn from its seed: at store calls (a failure before the call, a failure
 * after the call took effect — a commit whose answer was lost — and slowness), in the host's listener and
 * host-action handlers (runtime exceptions, {@link Error}s, checked exceptions thrown sneakily), and in the
 * runtime (a refused start, an answer that is refused or slow to arrive). Switched off while the checks read
 * and while the simulation winds down. Thread-safe; the draws follow the seed, their order follows the threads.
 */
final class Faults {
    /** The store calls that change something: a failure after them has taken effect. */
    private static final Set<String> WRITES = Set.of("createThread", "updateThread", "deleteThread", "write",
            "reserveSeq", "compactRunEvents", "answerInput", "reopenInput", "closeInput", "cancelPendingInputs",
            "rememberApproval", "saveFeedback", "claimHostAction", "completeHostAction", "leaseRuns", "takeOverRun",
            "saveAttachment", "forgetBlobs", "blob.put", "blob.delete", "blob.deleteOwner");

    private final Random random;
    private final double rate;
    private volatile boolean on;
    private final AtomicLong injected = new AtomicLong();
    /** Faults injected on the calling thread, to tell whether a call of an operation met one. */
    private final ThreadLocal<long[]> injectedHere = ThreadLocal.withInitial(() -> new long[1]);

    /** @param rate the base probability of a fault at each point (0 switches faults off for good) */
    Faults(long seed, double rate) {
        this.random = new Random(seed ^ 0x5DEECE66DL);
        this.rate = rate;
        this.on = rate > 0;
    }

    void switchOff() {
        on = false;
    }

    void switchOn() {
        on = rate > 0;
    }

    long injected() {
        return injected.get();
    }

    /** How many faults were injected on the calling thread so far (also the failures of a dead instance). */
    long injectedHere() {
        return injectedHere.get()[0];
    }

    /** Notes a failure the world caused on the calling thread that is not drawn (a dead instance's store). */
    void noteHere() {
        injectedHere.get()[0]++;
    }

    private boolean draw(double probability) {
        if (!on) {
            return false;
        }
        boolean hit;
        synchronized (random) {
            hit = random.nextDouble() < probability;
        }
        if (hit) {
            injected.incrementAndGet();
            injectedHere.get()[0]++;
        }
        return hit;
    }

    private int below(int bound) {
        synchronized (random) {
            return random.nextInt(bound);
        }
    }

    /** Before a store call: fails it, or slows it down. */
    void beforeStoreCall(String method) {
        if (draw(rate)) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "simulated: the store failed before " + method);
        }
        if (draw(rate)) {
            pause(1 + below(4));
        }
    }

    /** After a store call took effect: fails it anyway (the commit happened, its answer was lost). */
    void afterStoreCall(String method) {
        if (WRITES.contains(method) && draw(rate / 2)) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "simulated: the answer of " + method + " was lost");
        }
    }

    /** In a listener or host-action handler: throws something, sometimes. */
    void inHostCode(String where) {
        if (!draw(rate)) {
            return;
        }
        switch (below(3)) {
            case 0 -> throw new IllegalStateException("simulated: " + where + " threw");
            case 1 -> throw new AssertionError("simulated: " + where + " threw an Error");
            default -> sneakyThrow(new IOException("simulated: " + where + " threw a checked exception"));
        }
    }

    /** A runtime call that may be refused. */
    void runtimeCall(String call) {
        if (draw(rate / 2)) {
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "simulated: the runtime refused " + call);
        }
    }

    /** An answer on its way to the runtime: sometimes slower than an instance waits for it. */
    void slowAnswer() {
        if (draw(rate * 2)) {
            pause(150 + below(300));
        }
    }

    boolean answerRefused() {
        return draw(rate);
    }

    /** Whether a question gets a deadline (not a fault; drawn from the same seed). */
    boolean deadline() {
        synchronized (random) {
            return random.nextInt(3) == 0;
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneakyThrow(Throwable failure) throws E {
        throw (E) failure;
    }
}
