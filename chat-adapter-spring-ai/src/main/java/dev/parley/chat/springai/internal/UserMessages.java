package dev.parley.chat.springai.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.runtime.AttachmentSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.content.Media;
import org.springframework.util.MimeType;

/**
 * A person's message and its files as a Spring AI {@link UserMessage}: images, PDFs and WAV recordings as
 * {@link Media} named after their file (Spring AI's OpenAI model sends a PDF's name as its {@code filename}), and
 * text files as text after the person's words, between lines naming the file. A text file is never a
 * {@code Media}: Spring AI's OpenAI model turns a {@code text/plain} one into a text part holding its Base64 data
 * URL, which the model reads as Base64 rather than as text. MP3 is not taken: the same model labels an
 * {@code audio/mpeg} recording as {@code wav}.
 */
public final class UserMessages {
    /** Every type the client puts on the wire. */
    public static final Set<String> SUPPORTED = Set.of("image/png", "image/jpeg", "image/gif", "image/webp",
            "application/pdf", "audio/wav", "text/plain", "text/markdown", "text/csv", "application/json");

    private static final List<String> IMAGES = List.of("image/png", "image/jpeg", "image/gif", "image/webp");
    private static final List<String> TEXT = List.of("text/plain", "text/markdown", "text/csv", "application/json");
    private static final Map<String, String> NAMES = Map.of("image/png", "PNG", "image/jpeg", "JPEG", "image/gif",
            "GIF", "image/webp", "WebP", "text/plain", "plain text", "text/markdown", "Markdown", "text/csv", "CSV",
            "application/json", "JSON");

    private UserMessages() {
    }

    /**
     * What a client taking {@code types} declares, with a limit text naming them in words ("this model takes PNG,
     * JPEG, GIF and WebP images, PDF documents, WAV audio, and text files (plain text, Markdown, CSV, JSON)").
     *
     * @throws ChatException CONFIGURATION if a type is not one the client can send
     */
    public static AttachmentSupport support(Set<String> types) {
        for (String type : types) {
            if (!SUPPORTED.contains(type)) {
                throw ChatException.configuration("the Spring AI client cannot send " + type + " to a model; it sends "
                        + String.join(", ", new TreeSet<>(SUPPORTED))
                        + (type.equals("audio/mpeg") ? " (Spring AI's OpenAI model labels MP3 as wav)" : ""));
            }
        }
        if (types.isEmpty()) {
            return AttachmentSupport.NONE;
        }
        List<String> kinds = new ArrayList<>();
        List<String> images = IMAGES.stream().filter(types::contains).map(NAMES::get).toList();
        if (!images.isEmpty()) {
            kinds.add(and(images) + " images");
        }
        if (types.contains("application/pdf")) {
            kinds.add("PDF documents");
        }
        if (types.contains("audio/wav")) {
            kinds.add("WAV audio");
        }
        List<String> text = TEXT.stream().filter(types::contains).map(NAMES::get).toList();
        if (!text.isEmpty()) {
            kinds.add("text files (" + String.join(", ", text) + ")");
        }
        String listed = kinds.size() == 1 ? kinds.get(0)
                : String.join(", ", kinds.subList(0, kinds.size() - 1)) + ", and " + kinds.get(kinds.size() - 1);
        return new AttachmentSupport(types, "this model takes " + listed);
    }

    /** "A", "A and B", "A, B and C". */
    private static String and(List<String> words) {
        return words.size() == 1 ? words.get(0)
                : String.join(", ", words.subList(0, words.size() - 1)) + " and " + words.get(words.size() - 1);
    }

    /** The message as Spring AI takes it: its text (and its text files), with its other files as media. */
    public static UserMessage toUserMessage(ModelMessage.User user) {
        if (user.attachments().isEmpty()) {
            return new UserMessage(user.text());
        }
        StringBuilder text = new StringBuilder(user.text());
        List<Media> media = new ArrayList<>();
        for (ModelMessage.Attachment file : user.attachments()) {
            if (file.isText()) {
                text.append("\n\n").append(file.asText());
            } else if (SUPPORTED.contains(file.mediaType())) {
                media.add(Media.builder().mimeType(MimeType.valueOf(file.mediaType())).data(file.data())
                        .name(file.name()).build());
            } else {
                throw new IllegalArgumentException("the file " + file.name() + " is " + file.mediaType()
                        + ", which the Spring AI client cannot send");
            }
        }
        return UserMessage.builder().text(text.toString()).media(media).build();
    }
}
