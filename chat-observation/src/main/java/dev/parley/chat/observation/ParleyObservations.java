package dev.parley.chat.observation;

/**
 * The names of Parley's observations and of the keys on them. Keys follow OpenTelemetry's GenAI semantic
 * conventions where one applies ({@code gen_ai.*}, still marked Development there); the rest are Parley's.
 * Low-cardinality keys also tag the timers a meter handler makes; high-cardinality keys go on spans only.
 */
public final class ParleyObservations {
    /** A run, from its launch to its terminal event. Span name {@code invoke_agent parley}. */
    public static final String RUN = "parley.run";
    /** One streamed call to the model in the agent loop. Span name {@code chat <model>}. */
    public static final String MODEL_CALL = "parley.model.call";
    /** A tool call, from its start to its result. Span name {@code execute_tool <tool>}. */
    public static final String TOOL_CALL = "parley.tool.call";
    /** A run waiting for a person: an approval, an answer, a client tool. Span name {@code await_input <kind>}. */
    public static final String INPUT_WAIT = "parley.input.wait";
    /**
     * One write to the store (a run's first write, a flush of the batch writer). Span name {@code store_write};
     * a child of the run it writes when it writes only one.
     */
    public static final String STORE_WRITE = "parley.store.write";

    public static final String OPERATION = "gen_ai.operation.name";
    public static final String PROVIDER = "gen_ai.provider.name";
    public static final String AGENT_NAME = "gen_ai.agent.name";
    public static final String REQUEST_MODEL = "gen_ai.request.model";
    public static final String CONVERSATION_ID = "gen_ai.conversation.id";
    public static final String INPUT_TOKENS = "gen_ai.usage.input_tokens";
    public static final String OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
    public static final String FINISH_REASONS = "gen_ai.response.finish_reasons";
    public static final String TOOL_NAME = "gen_ai.tool.name";
    public static final String TOOL_CALL_ID = "gen_ai.tool.call.id";
    public static final String TOOL_ARGUMENTS = "gen_ai.tool.call.arguments";
    public static final String TOOL_RESULT = "gen_ai.tool.call.result";
    public static final String ERROR_TYPE = "error.type";

    public static final String RUNTIME = "parley.runtime";
    public static final String RUN_ID = "parley.run.id";
    public static final String THREAD_ID = "parley.thread.id";
    public static final String RUN_INPUT = "parley.run.input";
    public static final String STATUS = "parley.run.status";
    public static final String OUTCOME = "parley.outcome";
    public static final String TOOL_KIND = "parley.tool.kind";
    public static final String INPUT_KIND = "parley.input.kind";
    public static final String INPUT_ID = "parley.input.id";
    public static final String STORE_RUNS = "parley.store.runs";
    public static final String STORE_EVENTS = "parley.store.events";
    public static final String STORE_MESSAGES = "parley.store.messages";

    /** The value for keys whose value is not known (a run without a model choice, say). */
    public static final String UNKNOWN = "unknown";

    private ParleyObservations() {
    }
}
