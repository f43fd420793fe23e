package dev.parley.chat.reduce;

import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.model.UserMessage;

/** Copies of immutable messages with one part changed: streamed text, usage, error, truncation or status. Stateless. */
final class MessageCopies {
    private MessageCopies() {
    }

    static String streamedText(Message message) {
        if (message instanceof AssistantMessage) {
            return ((AssistantMessage) message).text();
        }
        if (message instanceof ThinkingMessage) {
            return ((ThinkingMessage) message).text();
        }
        if (message instanceof ActionExecutionMessage) {
            return ((ActionExecutionMessage) message).arguments();
        }
        return "";
    }

    static Message withStreamedText(Message m, CharSequence text) {
        if (m instanceof AssistantMessage) {
            AssistantMessage a = (AssistantMessage) m;
            return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                    text.toString(), a.error(), a.usage(), a.truncated(), a.suggestions());
        }
        if (m instanceof ThinkingMessage) {
            ThinkingMessage t = (ThinkingMessage) m;
            return new ThinkingMessage(t.id(), t.threadId(), t.runId(), t.parentMessageId(), t.status(), t.createdAt(),
                    text.toString());
        }
        if (m instanceof ActionExecutionMessage) {
            ActionExecutionMessage a = (ActionExecutionMessage) m;
            return new ActionExecutionMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(),
                    a.createdAt(), a.executionId(), a.name(), text.toString());
        }
        return m;
    }

    static AssistantMessage withUsage(AssistantMessage a, TokenUsage tokens) {
        return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                a.text(), a.error(), tokens, a.truncated(), a.suggestions());
    }

    static AssistantMessage withError(AssistantMessage a, ErrorInfo failure) {
        return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                a.text(), failure, a.usage(), a.truncated(), a.suggestions());
    }

    static AssistantMessage truncated(AssistantMessage a) {
        return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                a.text(), a.error(), a.usage(), true, a.suggestions());
    }

    /** The same message with another status; streamed text is kept by the slot, not here. */
    static Message withStatus(Message m, MessageStatus s) {
        switch (m.kind()) {
            case USER: {
                UserMessage u = (UserMessage) m;
                return new UserMessage(u.id(), u.threadId(), u.runId(), u.parentMessageId(), s, u.createdAt(), u.text());
            }
            case ASSISTANT: {
                AssistantMessage a = (AssistantMessage) m;
                return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), s, a.createdAt(),
                        a.text(), a.error(), a.usage(), a.truncated(), a.suggestions());
            }
            case THINKING: {
                ThinkingMessage t = (ThinkingMessage) m;
                return new ThinkingMessage(t.id(), t.threadId(), t.runId(), t.parentMessageId(), s, t.createdAt(),
                        t.text());
            }
            case ACTION_EXECUTION: {
                ActionExecutionMessage a = (ActionExecutionMessage) m;
                return new ActionExecutionMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), s,
                        a.createdAt(), a.executionId(), a.name(), a.arguments());
            }
            case RESULT: {
                ResultMessage r = (ResultMessage) m;
                return new ResultMessage(r.id(), r.threadId(), r.runId(), r.parentMessageId(), s, r.createdAt(),
                        r.executionId(), r.name(), r.result(), r.error());
            }
            case STATUS: {
                StatusMessage st = (StatusMessage) m;
                return new StatusMessage(st.id(), st.threadId(), st.runId(), st.parentMessageId(), s, st.createdAt(),
                        st.level(), st.text());
            }
            case TODO: {
                TodoMessage t = (TodoMessage) m;
                return new TodoMessage(t.id(), t.threadId(), t.runId(), t.parentMessageId(), s, t.createdAt(),
                        t.items());
            }
            case CLARIFY: {
                ClarifyMessage c = (ClarifyMessage) m;
                return new ClarifyMessage(c.id(), c.threadId(), c.runId(), c.parentMessageId(), s, c.createdAt(),
                        c.clarifyId(), c.question(), c.choices(), c.multiSelect(), c.answer());
            }
            case APPROVAL:
                return ((ApprovalMessage) m).withStatus(s);
            case ERROR: {
                ErrorMessage e = (ErrorMessage) m;
                return new ErrorMessage(e.id(), e.threadId(), e.runId(), e.parentMessageId(), s, e.createdAt(),
                        e.code(), e.message());
            }
            default:
                throw new IllegalStateException("unknown message kind " + m.kind());
        }
    }
}
