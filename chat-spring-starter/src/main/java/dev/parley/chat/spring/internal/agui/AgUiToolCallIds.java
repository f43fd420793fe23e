package dev.parley.chat.spring.internal.agui;

/**
 * The AG-UI {@code toolCallId} of a Parley tool call: its run's id and its execution id,
 * {@code "<runId>:<executionId>"}. Runtimes and model providers number tool calls per turn ({@code call_1},
 * {@code host_1} in every turn), while AG-UI clients find a call, and the card that shows its result, by
 * this id across the whole thread; the run's id makes it unique there. Stateless.
 */
final class AgUiToolCallIds {
    private AgUiToolCallIds() {
    }

    /** The id AG-UI knows the run's call {@code executionId} by. */
    static String of(String runId, String executionId) {
        return runId + ":" + executionId;
    }

    /**
     * Whether {@code toolCallId}, sent back by a client, names the run's call {@code executionId}: the id
     * {@link #of} gave it, or the bare execution id that responses from before this scheme carried.
     */
    static boolean names(String toolCallId, String runId, String executionId) {
        return toolCallId.equals(of(runId, executionId)) || toolCallId.equals(executionId);
    }
}
