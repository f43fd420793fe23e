package dev.parley.chat.agent;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/** One message of the conversation a model is sent, in the shape chat-completion APIs share. */
public sealed interface ModelMessage {

    /**
     * What the person wrote, and the files and images they sent with it.
     *
     * @param text the person's text
     * @param attachments the files sent with it, in the order given, each with its bytes; empty for none. Only
     *     types the client's {@link ModelClient#attachmentSupport()} accepts: the agent loop names any other
     *     (one sent while another runtime served the thread, or no longer kept) in {@code text} instead
     */
    record User(String text, List<Attachment> attachments) implements ModelMessage {
        public User {
            Objects.requireNonNull(text, "text");
            attachments = attachments == null ? List.of() : List.copyOf(attachments);
        }

        /** A message without attachments. */
        public User(String text) {
            this(text, List.of());
        }
    }

    /**
     * A file or image of a person's message, with its bytes, for a {@link ModelClient} to put on the wire.
     *
     * <p>The bytes are read once per run, before its first model call, and held here rather than read on demand:
     * a chat-completion API is sent the whole conversation on every call of the loop, so a lazy reader would
     * read every file again on each call, and a file that can no longer be read would fail the run halfway
     * through instead of before the model is called. They are bounded by the host's attachment limits. The
     * record is immutable: the bytes are copied in, {@link #data()} hands out a copy, and {@link #base64()},
     * {@link #text()} and {@link #open()} read them without one.
     *
     * @param name the file's name as stored (sanitised: no path, no control characters)
     * @param mediaType its media type as read from its content, lower case, no parameters
     * @param data its bytes
     */
    record Attachment(String name, String mediaType, byte[] data) {
        /**
         * Text types a model is given as text (see {@link #isText()}): chat APIs have no file part for them, and
         * some libraries would send them base64-encoded.
         */
        public static final Set<String> TEXT_TYPES = Set.of("text/plain", "text/markdown", "text/csv",
                "application/json");

        public Attachment {
            Objects.requireNonNull(name, "name");
            mediaType = Objects.requireNonNull(mediaType, "mediaType").toLowerCase(Locale.ROOT);
            data = Objects.requireNonNull(data, "data").clone();
        }

        /** A copy of the bytes. */
        @Override
        public byte[] data() {
            return data.clone();
        }

        /** How many bytes the file has. */
        public int size() {
            return data.length;
        }

        /** The bytes, read without copying them. */
        public InputStream open() {
            return new ByteArrayInputStream(data);
        }

        /** The bytes in standard Base64 (no line breaks), as data URLs and most APIs take them. */
        public String base64() {
            return Base64.getEncoder().encodeToString(data);
        }

        /** {@code data:<mediaType>;base64,<bytes>}. */
        public String dataUrl() {
            return "data:" + mediaType + ";base64," + base64();
        }

        /** The bytes as UTF-8 text (the engine stores text attachments only when they are UTF-8). */
        public String text() {
            return new String(data, StandardCharsets.UTF_8);
        }

        /** True for images ({@code image/…}). */
        public boolean isImage() {
            return mediaType.startsWith("image/");
        }

        /** True for one of the {@link #TEXT_TYPES}, which a model is given as text. */
        public boolean isText() {
            return TEXT_TYPES.contains(mediaType);
        }

        /**
         * The file as a model reads a text file: its content between lines that name it,
         * {@code <file name="notes.md" type="text/markdown">} and {@code </file>}.
         */
        public String asText() {
            String content = text();
            return "<file name=\"" + name.replace('"', '\'') + "\" type=\"" + mediaType + "\">\n" + content
                    + (content.endsWith("\n") ? "" : "\n") + "</file>";
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Attachment that && name.equals(that.name) && mediaType.equals(that.mediaType)
                    && Arrays.equals(data, that.data);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, mediaType, Arrays.hashCode(data));
        }

        /** Names the file, never its bytes. */
        @Override
        public String toString() {
            return "Attachment[name=" + name + ", mediaType=" + mediaType + ", size=" + data.length + "]";
        }
    }

    /** What the model answered: text, tool calls, or both. */
    record Assistant(String text, List<ToolCall> toolCalls) implements ModelMessage {
        public Assistant {
            Objects.requireNonNull(text, "text");
            toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        }
    }

    /** A tool call's result, answering the assistant message that made the call. */
    record ToolResult(String callId, String name, String result, boolean error) implements ModelMessage {
        public ToolResult {
            Objects.requireNonNull(callId, "callId");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(result, "result");
        }
    }
}
