package dev.parley.chat.langchain4j.internal;

import dev.langchain4j.data.message.AudioContent;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.PdfFileContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.parley.chat.ChatException;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.runtime.AttachmentSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A person's message and its files as LangChain4j contents: images as {@link ImageContent} (Base64, with the
 * detail level chosen), PDFs as {@link PdfFileContent}, WAV and MP3 recordings as {@link AudioContent}, and text
 * files as {@link TextContent} (LangChain4j has no content for a text file: it goes as text, named, after the
 * person's words). An MP3 is labelled {@code audio/mp3}: LangChain4j's OpenAI model writes the MIME subtype as
 * {@code input_audio.format}, and OpenAI takes {@code mp3}, not {@code mpeg}.
 */
public final class UserContents {
    private static final List<String> IMAGES = List.of("image/png", "image/jpeg", "image/gif", "image/webp");
    private static final List<String> AUDIO = List.of("audio/wav", "audio/mpeg");
    private static final List<String> TEXT = List.of("text/plain", "text/markdown", "text/csv", "application/json");
    private static final Map<String, String> NAMES = Map.ofEntries(Map.entry("image/png", "PNG"),
            Map.entry("image/jpeg", "JPEG"), Map.entry("image/gif", "GIF"), Map.entry("image/webp", "WebP"),
            Map.entry("audio/wav", "WAV"), Map.entry("audio/mpeg", "MP3"), Map.entry("text/plain", "plain text"),
            Map.entry("text/markdown", "Markdown"), Map.entry("text/csv", "CSV"), Map.entry("application/json", "JSON"));

    /** Every type the client can put on the wire. */
    public static final Set<String> SUPPORTED = Set.of("image/png", "image/jpeg", "image/gif", "image/webp",
            "application/pdf", "audio/wav", "audio/mpeg", "text/plain", "text/markdown", "text/csv",
            "application/json");

    private UserContents() {
    }

    /**
     * What a client taking {@code types} declares, with a limit text naming them in words ("this model takes PNG,
     * JPEG, GIF and WebP images, PDF documents, WAV and MP3 audio, and text files (plain text, Markdown, CSV,
     * JSON)").
     *
     * @throws ChatException CONFIGURATION if a type is not one the client can send
     */
    public static AttachmentSupport support(Set<String> types) {
        for (String type : types) {
            if (!SUPPORTED.contains(type)) {
                throw ChatException.configuration("the LangChain4j client cannot send " + type + " to a model; it"
                        + " sends " + String.join(", ", new TreeSet<>(SUPPORTED)));
            }
        }
        if (types.isEmpty()) {
            return AttachmentSupport.NONE;
        }
        List<String> kinds = new ArrayList<>();
        List<String> images = names(IMAGES, types);
        if (!images.isEmpty()) {
            kinds.add(and(images) + " images");
        }
        if (types.contains("application/pdf")) {
            kinds.add("PDF documents");
        }
        List<String> audio = names(AUDIO, types);
        if (!audio.isEmpty()) {
            kinds.add(and(audio) + " audio");
        }
        List<String> text = names(TEXT, types);
        if (!text.isEmpty()) {
            kinds.add("text files (" + String.join(", ", text) + ")");
        }
        String listed = kinds.size() == 1 ? kinds.get(0)
                : String.join(", ", kinds.subList(0, kinds.size() - 1)) + ", and " + kinds.get(kinds.size() - 1);
        return new AttachmentSupport(types, "this model takes " + listed);
    }

    private static List<String> names(List<String> family, Set<String> types) {
        return family.stream().filter(types::contains).map(NAMES::get).toList();
    }

    /** "A", "A and B", "A, B and C". */
    private static String and(List<String> words) {
        return words.size() == 1 ? words.get(0)
                : String.join(", ", words.subList(0, words.size() - 1)) + " and " + words.get(words.size() - 1);
    }

    /** The message as LangChain4j takes it: plain text without files, else its text then each file. */
    public static UserMessage toUserMessage(ModelMessage.User user, ImageContent.DetailLevel detail) {
        if (user.attachments().isEmpty()) {
            return UserMessage.from(user.text());
        }
        List<Content> contents = new ArrayList<>();
        contents.add(TextContent.from(user.text()));
        for (ModelMessage.Attachment file : user.attachments()) {
            contents.add(toContent(file, detail));
        }
        return UserMessage.from(contents);
    }

    private static Content toContent(ModelMessage.Attachment file, ImageContent.DetailLevel detail) {
        if (file.isText()) {
            return TextContent.from(file.asText());
        }
        if (file.isImage()) {
            return ImageContent.from(file.base64(), file.mediaType(), detail);
        }
        return switch (file.mediaType()) {
            case "application/pdf" -> PdfFileContent.from(file.base64(), file.mediaType());
            case "audio/wav" -> AudioContent.from(file.base64(), "audio/wav");
            case "audio/mpeg" -> AudioContent.from(file.base64(), "audio/mp3");
            default -> throw new IllegalArgumentException("the file " + file.name() + " is " + file.mediaType()
                    + ", which the LangChain4j client cannot send");
        };
    }
}
