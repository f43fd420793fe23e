package dev.parley.chat.engine.internal;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Repeats a store call that failed, a few times with short pauses, for calls a run cannot do without. */
final class StoreRetry {
    private static final int ATTEMPTS = 3;
    private static final long FIRST_PAUSE_MILLIS = 50;

    private StoreRetry() {
    }

    /**
     * The call's result, trying up to three times.
     *
     * @throws RuntimeException the last failure, if every attempt failed
     */
    static <T> T call(Supplier<T> call) {
        RuntimeException last = null;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try {
                return call.get();
            } catch (RuntimeException e) {
                last = e;
                if (attempt + 1 < ATTEMPTS && !pause(FIRST_PAUSE_MILLIS << attempt)) {
                    break;
                }
            }
        }
        throw last;
    }

    static void run(Runnable call) {
        call(() -> {
            call.run();
            return null;
        });
    }

    /** @return false if the thread was interrupted */
    static boolean pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
