package dev.parley.chat.engine.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.ChatStore;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Writes a thread out, page by page, so a thread of any length is exported in constant memory: as JSON
 * (every branch, variant and step, the feedback; shape {@code parley-thread} version 1) or as Markdown (the
 * active branch as a person reads it). Messages are read a page at a time, and each answer's steps a page at
 * a time after it, however many its run has. Not thread-safe; one export per instance.
 */
public final class ThreadExport {
    /** The version of the JSON shape; a reader rejects a version it does not know. */
    public static final int VERSION = 1;

    private final ChatStore store;
    private final ThreadViews views;
    private final int page;

    /** @param page how many messages one read of the store takes (the engine's largest page) */
    public ThreadExport(ChatStore store, ThreadViews views, int page) {
        if (page < 1) {
            throw new IllegalArgumentException("page must be positive, got " + page);
        }
        this.store = store;
        this.views = views;
        this.page = page;
    }

    /**
     * {@code {"format":"parley-thread","version":1,"exportedAt":…,"thread":{…},"activeBranch":[ids],
     * "messages":[{…message, "steps":[…], "feedback":[…]}…]}}: every user and assistant message of every
     * branch in first-save order, each assistant message with its steps, each message with its feedback.
     */
    public void json(ChatThread thread, Instant exportedAt, OutputStream out) throws IOException {
        try (JsonGenerator json = ChatJson.shared().generator(out)) {
            json.writeStartObject();
            json.writeStringField("format", "parley-thread");
            json.writeNumberField("version", VERSION);
            json.writeNumberField("exportedAt", exportedAt.toEpochMilli());
            json.writeFieldName("thread");
            json.writeObject(thread);
            json.writeArrayFieldStart("activeBranch");
            for (String id : activeBranchIds(thread)) {
                json.writeString(id);
            }
            json.writeEndArray();
            json.writeArrayFieldStart("messages");
            String after = null;
            List<Message> read;
            do {
                read = store.listTopLevelMessagesAfter(thread.id(), after, page);
                writeMessages(json, read);
                json.flush();
                if (!read.isEmpty()) {
                    after = read.get(read.size() - 1).id();
                }
            } while (read.size() == page);
            json.writeEndArray();
            json.writeEndObject();
        }
    }

    private void writeMessages(JsonGenerator json, List<Message> messages) throws IOException {
        List<String> ids = new ArrayList<>();
        for (Message message : messages) {
            ids.add(message.id());
        }
        Map<String, List<Feedback>> feedback = new HashMap<>();
        for (Feedback rating : ids.isEmpty() ? List.<Feedback>of() : store.listFeedback(ids)) {
            feedback.computeIfAbsent(rating.messageId(), k -> new ArrayList<>()).add(rating);
        }
        for (Message message : messages) {
            json.writeStartObject();
            json.writeFieldName("message");
            json.writeObject(message);
            json.writeArrayFieldStart("steps");
            if (message.kind() == MessageKind.ASSISTANT) {
                forEachStep(message.runId(), json::writeObject);
            }
            json.writeEndArray();
            json.writeFieldName("feedback");
            json.writeObject(feedback.getOrDefault(message.id(), List.of()));
            json.writeEndObject();
        }
    }

    /**
     * Hands on every step of a run, oldest first, reading {@code page} of them at a time: a run of any
     * length is written in constant memory.
     *
     * @return how many steps there were
     */
    private int forEachStep(String runId, StepWriter writer) throws IOException {
        int steps = 0;
        String after = null;
        List<Message> read;
        do {
            read = store.listStepMessagesAfter(runId, after, page);
            for (Message step : read) {
                writer.write(step);
            }
            steps += read.size();
            if (!read.isEmpty()) {
                after = read.get(read.size() - 1).id();
            }
        } while (read.size() == page);
        return steps;
    }

    /** Writes one step out. */
    @FunctionalInterface
    private interface StepWriter {
        void write(Message step) throws IOException;
    }

    /** The ids of the active branch, oldest first (ids only: a branch of any length fits). */
    private List<String> activeBranchIds(ChatThread thread) {
        String leaf = views.activeLeaf(thread);
        List<String> ids = new ArrayList<>();
        String before = null;
        while (leaf != null) {
            List<Message> read = store.listBranch(thread.id(), leaf, before, page);
            for (int i = read.size() - 1; i >= 0; i--) {
                ids.add(read.get(i).id());
            }
            if (read.size() < page) {
                break;
            }
            before = read.get(0).id();
        }
        java.util.Collections.reverse(ids);
        return ids;
    }

    /**
     * The active branch as Markdown: the title, then each turn — the person's message, the answer with its
     * tool calls, questions and approvals summed up in a line each (thinking is left out). A message's files are
     * listed under it, linked through {@code linkOf} when given; where the conversation branched (an edit, a
     * roll-back) the person's message says which version it is.
     */
    public void markdown(ChatThread thread, OutputStream out, @Nullable Function<MessageAttachment, String> linkOf)
            throws IOException {
        Writer text = new OutputStreamWriter(out, StandardCharsets.UTF_8);
        text.write("# " + (thread.title() == null ? "Conversation" : oneLine(thread.title())) + "\n");
        List<String> ids = activeBranchIds(thread);
        for (int from = 0; from < ids.size(); from += page) {
            List<Message> read = store.findMessages(ids.subList(from, Math.min(ids.size(), from + page)));
            List<String> userIds = read.stream().filter(UserMessage.class::isInstance).map(Message::id).toList();
            Map<String, List<String>> siblings = userIds.isEmpty() ? Map.of()
                    : store.findUserSiblingIds(thread.id(), userIds);
            for (Message message : read) {
                if (message instanceof UserMessage user) {
                    List<String> versions = siblings.getOrDefault(user.id(), List.of());
                    String fork = versions.size() < 2 ? "" : " _(version " + (versions.indexOf(user.id()) + 1) + " of "
                            + versions.size() + " here: the conversation branched; the JSON export holds every branch)_";
                    text.write("\n**You:**" + fork + "\n\n" + user.text().strip() + "\n");
                    writeAttachments(text, user.attachments(), linkOf);
                } else if (message instanceof AssistantMessage answer) {
                    text.write("\n**Assistant:**\n\n");
                    int steps = forEachStep(answer.runId(), step -> {
                        String line = stepLine(step);
                        if (line != null) {
                            text.write("> " + line + "\n");
                        }
                    });
                    if (steps > 0) {
                        text.write("\n");
                    }
                    text.write((answer.text().isBlank() ? "_(no answer)_" : answer.text().strip()) + "\n");
                }
            }
            text.flush();
        }
        text.flush();
    }

    /** A line per file: a link where the host serves them, else its name; its type and size either way. */
    private static void writeAttachments(Writer text, List<MessageAttachment> attachments,
            @Nullable Function<MessageAttachment, String> linkOf) throws IOException {
        if (attachments.isEmpty()) {
            return;
        }
        text.write("\n");
        for (MessageAttachment file : attachments) {
            String name = file.name().replaceAll("([\\\\`*_\\[\\]<>])", "\\\\$1");
            String shown = linkOf == null ? name : "[" + name + "](<" + linkOf.apply(file) + ">)";
            text.write("- " + shown + " (" + file.mediaType() + ", " + file.size() + " bytes)\n");
        }
    }

    private static String stepLine(Message step) {
        if (step instanceof ActionExecutionMessage call) {
            return "Tool `" + call.name() + "` " + oneLine(call.arguments());
        }
        if (step instanceof ResultMessage result) {
            return (result.error() ? "Tool failed: " : "Tool result: ") + oneLine(abbreviate(result.result()));
        }
        if (step instanceof ClarifyMessage clarify) {
            return "Asked: " + oneLine(clarify.question())
                    + (clarify.answer().isEmpty() ? "" : " — answered: " + String.join(", ", clarify.answer()));
        }
        if (step instanceof ApprovalMessage approval) {
            return "Approval for `" + approval.request().toolName() + "`: "
                    + (approval.decision() != null ? approval.decision().wireName()
                            : approval.outcome() != null ? approval.outcome().name().toLowerCase(java.util.Locale.ROOT)
                                    : "pending");
        }
        if (step instanceof ErrorMessage error) {
            return "Error: " + oneLine(error.message());
        }
        if (step instanceof ThinkingMessage) {
            return null;
        }
        return null;
    }

    private static String oneLine(String text) {
        return text.strip().replaceAll("\\s+", " ");
    }

    private static String abbreviate(String text) {
        return text.length() <= 300 ? text : text.substring(0, 300) + "…";
    }
}
