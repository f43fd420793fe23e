package dev.parley.chat.agent.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.runtime.AttachmentContent;
import dev.parley.chat.runtime.AttachmentSupport;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The person's messages of one run as the model is given them, their attachments read once each. An attachment
 * the client cannot take (sent while another runtime served the thread) or that is no longer kept is named in the
 * message's text instead, so the model knows it was there and nothing vanishes without a word. Not thread-safe:
 * one run's loop uses it.
 */
final class AttachedFiles {
    private static final Logger log = LoggerFactory.getLogger(AttachedFiles.class);

    private final AttachmentContent content;
    private final AttachmentSupport support;
    private final Map<String, ModelMessage.Attachment> read = new HashMap<>();

    AttachedFiles(AttachmentContent content, AttachmentSupport support) {
        this.content = content;
        this.support = support;
    }

    /**
     * The person's message with its attachments' bytes.
     *
     * @throws ChatException as reading an attachment fails, but for one no longer kept (NOT_FOUND), which is
     *     named in the text
     */
    ModelMessage.User user(String text, List<MessageAttachment> files) {
        if (files.isEmpty()) {
            return new ModelMessage.User(text);
        }
        List<ModelMessage.Attachment> passed = new ArrayList<>();
        StringBuilder notes = new StringBuilder();
        for (MessageAttachment file : files) {
            if (!support.accepts(file.mediaType())) {
                notes.append("\n[").append(file.name()).append(" (").append(file.mediaType())
                        .append(") was attached; this model cannot take it]");
                continue;
            }
            ModelMessage.Attachment attachment = read.get(file.id());
            if (attachment == null) {
                try {
                    attachment = new ModelMessage.Attachment(file.name(), file.mediaType(), content.readAllBytes(file));
                } catch (ChatException e) {
                    if (e.code() != ErrorCode.NOT_FOUND) {
                        throw e;
                    }
                    log.debug("Attachment {} is no longer kept; the model is told so", file.id());
                    notes.append("\n[").append(file.name()).append(" was attached; it is no longer available]");
                    continue;
                }
                read.put(file.id(), attachment);
            }
            passed.add(attachment);
        }
        return new ModelMessage.User(notes.isEmpty() ? text : text + "\n" + notes, passed);
    }
}
