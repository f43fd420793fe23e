package dev.parley.chat.engine;

/**
 * What happens when a message arrives for a thread that already has an active run (LangGraph calls this
 * double texting).
 */
public enum DoubleTexting {
    /** The new run is refused with {@code CONFLICT}. The default. */
    REJECT,
    /** The new run waits as QUEUED and starts when the runs before it have ended. */
    ENQUEUE,
    /** The active run is cancelled and the new run starts as soon as it has ended. */
    INTERRUPT
}
