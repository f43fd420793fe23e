package dev.parley.simulator;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The scripted behaviours of the simulator. {@link #choose(String)} picks one from words in the user
 * message, so a chat page or a test selects a scenario just by what it types.
 */
public enum Scenario {
    /** Thinking, a streamed Markdown answer that quotes the message, usage, {@code final}. The default. */
    PLAIN,
    /** Two tool calls with results, a todo list that advances, reasoning between the tools. Words: tool, todo. */
    TOOLS,
    /** A clarify question that waits for the answer (or for a cancel, which withdraws it). Words: clarify, ask me. */
    CLARIFY,
    /** Some output, then an {@code error} frame and {@code done{failed}}. Words: fail, error. */
    FAIL,
    /** N small {@code text_delta} frames as fast as allowed ({@code long 5000}). Word: long [N]. */
    LONG,
    /** A longer answer at the configured slow rate, to watch it stream or to cancel it. Word: slow. */
    SLOW,
    /** A plain answer whose first connection is cut abruptly mid-stream; the run goes on. Word: drop. */
    DROP,
    /** A plain answer during which Hermes' session id rotates ({@code session_rotated}). Word: rotate. */
    ROTATE,
    /**
     * Calls a host tool the run offers — the one whose name the message mentions, else the first — with the JSON
     * object the message holds as its arguments (else {@code {"input": <message>}}), and waits for its result.
     * Words: host tool, action.
     */
    HOST_TOOL,
    /**
     * A shell command Hermes flags as dangerous: asks for an approval and waits for the decision, runs it or
     * not, and says so. Not asked again where "session" or "always" approved it before. Words: approve, approval.
     */
    APPROVE;

    private static final Pattern LONG_COUNT = Pattern.compile("\\blong\\s+(\\d{1,9})\\b");
    private static final Pattern WORD = Pattern.compile("[a-z]+");

    /** The scenario a message asks for; see each constant for its words. */
    public static Scenario choose(String message) {
        String text = message.toLowerCase(Locale.ROOT);
        if (has(text, "long")) {
            return LONG;
        }
        if (has(text, "clarify") || text.contains("ask me")) {
            return CLARIFY;
        }
        if (has(text, "approve") || has(text, "approval")) {
            return APPROVE;
        }
        if (text.contains("host tool") || has(text, "action")) {
            return HOST_TOOL;
        }
        if (has(text, "tool") || has(text, "tools") || has(text, "todo")) {
            return TOOLS;
        }
        if (has(text, "fail") || has(text, "error")) {
            return FAIL;
        }
        if (has(text, "drop")) {
            return DROP;
        }
        if (has(text, "rotate")) {
            return ROTATE;
        }
        if (has(text, "slow")) {
            return SLOW;
        }
        return PLAIN;
    }

    /** The event count a {@code long N} message asks for, or {@code fallback}. */
    public static int longCount(String message, int fallback) {
        Matcher m = LONG_COUNT.matcher(message.toLowerCase(Locale.ROOT));
        if (m.find()) {
            long n = Long.parseLong(m.group(1));
            return (int) Math.max(1, Math.min(n, 10_000_000));
        }
        return fallback;
    }

    private static boolean has(String text, String word) {
        Matcher m = WORD.matcher(text);
        while (m.find()) {
            if (m.group().equals(word)) {
                return true;
            }
        }
        return false;
    }
}
