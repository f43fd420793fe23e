package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Repeats a store call that failed, a few times with short pauses, for calls a run cannot do without. */
final class StoreRetry {
    private static final int ATTEMPTS = 3;
    private static final long FIRST_PAUSE_MILLIS = 50;

    private StoreRetry() {
    }

    /**
     * The call's result, trying up to three times. Only failures of the store itself are tried again: an
     * answer such as NOT_FOUND (the thread was deleted) or CONFLICT would be the same the next time.
     *
     * @throws RuntimeException the last failure, if every attempt failed, or the first one that is not a
     *     failure of the store
     */
    static <T> T call(Supplier<T> call) {
        RuntimeException last = null;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try {
                return call.get();
            } catch (RuntimeException e) {
                if (e instanceof ChatException answer && answer.code() != ErrorCode.STORE_FAILURE) {
                    throw e;
                }
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
