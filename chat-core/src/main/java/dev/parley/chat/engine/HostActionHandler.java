package dev.parley.chat.engine;

/**
 * Runs a host action. Called at most once per execution id, on one of the engine's background threads;
 * it may block. Whatever it returns (JSON or plain text) goes back to the runtime as the tool's result;
 * an exception becomes an error result, never a crashed run.
 */
@FunctionalInterface
public interface HostActionHandler {
    String handle(HostActionCall call) throws Exception;
}
