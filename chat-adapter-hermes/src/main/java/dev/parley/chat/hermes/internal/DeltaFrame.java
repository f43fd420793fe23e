package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * A {@code text_delta} or {@code thinking} frame: {@code seq}, {@code kind} and {@code text} (if any) read
 * straight off the frame. Most of a stream is these; building a tree for each cost a quarter of the stream
 * thread's time in the bench, and setting up a Jackson parser for each still cost a third of it.
 *
 * <p>The frames the Bridge sends (one flat object of strings without escapes and non-negative integers)
 * are read by a scanner over the string itself; anything else that scanner meets (an escape, a control
 * character, another kind of value, anything malformed, a long frame) leaves the frame to Jackson's
 * tokens, so both readings give the same result for every input.
 */
record DeltaFrame(long seq, String kind, @Nullable String text) {
    /** Longer frames go to Jackson (far below its limits on a string's and a name's length). */
    private static final int MAX_SCANNED_LENGTH = 16_384;
    /** More digits go to Jackson (18 always fit a long). */
    private static final int MAX_SCANNED_DIGITS = 18;
    private static final String TEXT_DELTA = "text_delta";
    private static final String THINKING = "thinking";
    /** The scanner's answer for a frame it read in full and that is no delta frame. */
    static final DeltaFrame NONE = new DeltaFrame(0, "", null);

    /**
     * Reads a delta frame without building a tree, or returns null for anything else (another kind, a
     * nested value, a field of an unexpected type, malformed JSON), which is then read as a tree, with the
     * same result and the same errors.
     */
    static @Nullable DeltaFrame read(ObjectMapper json, String data) {
        DeltaFrame scanned = scan(data);
        if (scanned == NONE) {
            return null;
        }
        return scanned != null ? scanned : parse(json, data);
    }

    /** The same as {@link #read}, always off Jackson's tokens. */
    static @Nullable DeltaFrame parse(ObjectMapper json, String data) {
        try (JsonParser parser = json.createParser(data)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            long seq = 0;
            String kind = null;
            String text = null;
            JsonToken token;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if (value == null || value.isStructStart()) {
                    return null;
                }
                switch (name) {
                    case "seq":
                        if (value != JsonToken.VALUE_NUMBER_INT) {
                            return null;
                        }
                        seq = parser.getLongValue();
                        break;
                    case "kind":
                    case "text":
                        if (value != JsonToken.VALUE_STRING) {
                            return null;
                        }
                        if (name.equals("kind")) {
                            kind = parser.getText();
                        } else {
                            text = parser.getText();
                        }
                        break;
                    default:
                        break;
                }
            }
            if (token != JsonToken.END_OBJECT || !(TEXT_DELTA.equals(kind) || THINKING.equals(kind))) {
                return null;
            }
            return new DeltaFrame(seq, kind, text);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Reads a flat object whose values are strings without escapes or control characters and integers
     * without sign, fraction or exponent: the delta frame, {@link #NONE} for another frame, or null for
     * anything it does not read (Jackson decides then). Stops at the object's end, as Jackson's tokens do.
     */
    static @Nullable DeltaFrame scan(String data) {
        int length = data.length();
        if (length > MAX_SCANNED_LENGTH) {
            return null;
        }
        int at = skipSpace(data, 0);
        if (at >= length || data.charAt(at) != '{') {
            return null;
        }
        at = skipSpace(data, at + 1);
        if (at < length && data.charAt(at) == '}') {
            return NONE;
        }
        long seq = 0;
        String kind = null;
        int textStart = -1;
        int textEnd = -1;
        while (true) {
            if (at >= length || data.charAt(at) != '"') {
                return null;
            }
            int nameStart = at + 1;
            int nameEnd = stringEnd(data, nameStart);
            if (nameEnd < 0) {
                return null;
            }
            at = skipSpace(data, nameEnd + 1);
            if (at >= length || data.charAt(at) != ':') {
                return null;
            }
            at = skipSpace(data, at + 1);
            if (at >= length) {
                return null;
            }
            char first = data.charAt(at);
            int valueEnd;
            if (first == '"') {
                valueEnd = stringEnd(data, at + 1);
                if (valueEnd < 0) {
                    return null;
                }
                if (isName(data, nameStart, nameEnd, "kind")) {
                    kind = kindOf(data, at + 1, valueEnd);
                } else if (isName(data, nameStart, nameEnd, "text")) {
                    textStart = at + 1;
                    textEnd = valueEnd;
                } else if (isName(data, nameStart, nameEnd, "seq")) {
                    return null;
                }
                valueEnd++;
            } else if (first >= '0' && first <= '9') {
                valueEnd = digitsEnd(data, at);
                if (valueEnd < 0) {
                    return null;
                }
                if (isName(data, nameStart, nameEnd, "seq")) {
                    seq = Long.parseLong(data, at, valueEnd, 10);
                } else if (isName(data, nameStart, nameEnd, "kind") || isName(data, nameStart, nameEnd, "text")) {
                    return null;
                }
            } else {
                return null;
            }
            at = skipSpace(data, valueEnd);
            if (at >= length) {
                return null;
            }
            char next = data.charAt(at);
            if (next == '}') {
                break;
            }
            if (next != ',') {
                return null;
            }
            at = skipSpace(data, at + 1);
        }
        if (kind == null || kind.isEmpty()) {
            return NONE;
        }
        return new DeltaFrame(seq, kind, textStart < 0 ? null : data.substring(textStart, textEnd));
    }

    /** Where JSON whitespace from {@code at} ends. */
    private static int skipSpace(String data, int at) {
        int i = at;
        while (i < data.length()) {
            char c = data.charAt(i);
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                break;
            }
            i++;
        }
        return i;
    }

    /** The index of the closing quote of a string starting at {@code from}, or -1 (an escape, a control character, no end). */
    private static int stringEnd(String data, int from) {
        for (int i = from; i < data.length(); i++) {
            char c = data.charAt(i);
            if (c == '"') {
                return i;
            }
            if (c == '\\' || c < 0x20) {
                return -1;
            }
        }
        return -1;
    }

    /**
     * Where an integer starting at {@code from} ends, or -1 unless it is a plain one of at most
     * {@link #MAX_SCANNED_DIGITS} digits followed by whitespace, a comma or the object's end.
     */
    private static int digitsEnd(String data, int from) {
        int i = from;
        while (i < data.length() && data.charAt(i) >= '0' && data.charAt(i) <= '9') {
            i++;
        }
        if (i - from > MAX_SCANNED_DIGITS || (data.charAt(from) == '0' && i - from > 1) || i >= data.length()) {
            return -1;
        }
        char after = data.charAt(i);
        return after == ',' || after == '}' || after == ' ' || after == '\n' || after == '\r' || after == '\t' ? i : -1;
    }

    private static boolean isName(String data, int start, int end, String name) {
        return end - start == name.length() && data.startsWith(name, start);
    }

    /** The delta kind the string between {@code start} and {@code end} names, or {@link #NONE}'s empty kind. */
    private static String kindOf(String data, int start, int end) {
        if (isName(data, start, end, TEXT_DELTA)) {
            return TEXT_DELTA;
        }
        return isName(data, start, end, THINKING) ? THINKING : "";
    }
}
