package dev.parley.chat.engine.internal;

import org.jspecify.annotations.Nullable;
import org.slf4j.MDC;

/** Puts a run's ids into the logging context ({@code parley.threadId}, {@code parley.runId}) for some work. */
final class RunMdc {
    private RunMdc() {
    }

    /**
     * Runs {@code work} with the run's ids in the MDC, then puts back what was there. When they are there
     * already (a runtime's stream thread that carries the context it was started in) the MDC is not touched:
     * that is most of a run's events.
     */
    static void run(String threadId, String runId, Runnable work) {
        String outerThread = MDC.get("parley.threadId");
        String outerRun = MDC.get("parley.runId");
        if (threadId.equals(outerThread) && runId.equals(outerRun)) {
            work.run();
            return;
        }
        MDC.put("parley.threadId", threadId);
        MDC.put("parley.runId", runId);
        try {
            work.run();
        } finally {
            restore("parley.threadId", outerThread);
            restore("parley.runId", outerRun);
        }
    }

    private static void restore(String key, @Nullable String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
