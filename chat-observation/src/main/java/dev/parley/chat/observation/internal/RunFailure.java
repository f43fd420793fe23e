package dev.parley.chat.observation.internal;

/** A FAILED run, as the error of its observation: the run's error code and message, no stack trace. */
final class RunFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RunFailure(String code, String message) {
        super(code + ": " + message, null, false, false);
    }
}
