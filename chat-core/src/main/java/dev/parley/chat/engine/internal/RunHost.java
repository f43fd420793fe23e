package dev.parley.chat.engine.internal;

/** What an {@link ActiveRun} tells the part of the engine that holds it. Called on the run's threads. */
interface RunHost {
    /** The run logged its terminal event: free its thread's lane (and start what waits there). */
    void runEnded(ActiveRun run);

    /** The store says another host instance holds the run's lease now: let the run go. */
    void leaseLost(ActiveRun run);
}
