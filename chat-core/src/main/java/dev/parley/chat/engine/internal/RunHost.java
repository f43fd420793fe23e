package dev.parley.chat.engine.internal;

/** What an {@link ActiveRun} tells the part of the engine that holds it. Called on the run's threads. */
interface RunHost {
    /** The run logged its terminal event: free its thread's lane (and start what waits there). */
    void runEnded(ActiveRun run);

    /** The store says another host instance holds the run's lease now: let the run go. */
    void leaseLost(ActiveRun run);

    /**
     * Runs {@code markStarted} unless the engine is closing, atomically with the close's decision, so that a
     * run a closing engine leaves queued (for the next engine) never starts here too. False if closing.
     */
    boolean startUnlessClosing(Runnable markStarted);
}
