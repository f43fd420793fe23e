package dev.parley.chat.agent;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.attachment.InMemoryBlobStore;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Attachments through the agent loop: the bytes of the question's files and of earlier messages' files reach the
 * model with their messages on every call, the runtime declares what its client takes, and a file the model
 * cannot be given is named rather than dropped.
 */
class AttachmentsInTheLoopTest extends AgentLoopFixture {
    static final byte[] PNG = bytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 200);
    static final byte[] PDF = bytes("%PDF-1.7\n".getBytes(StandardCharsets.US_ASCII), 300);
    static final byte[] NOTES = "first line\nsecond line\n".getBytes(StandardCharsets.UTF_8);

    private final InMemoryBlobStore blobs = new InMemoryBlobStore();

    private static byte[] bytes(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 17 + 3);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    private ChatEngine engine(ModelClient model, BlobStore blobStore) {
        return ChatEngine.builder().store(store).blobStore(blobStore)
                .runtime(AgentLoopRuntime.builder(model).build())
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(500)))
                .hostAction(new dev.parley.chat.engine.HostAction(LOOKUP, call -> "shipped"))
                .build();
    }

    private static Run until(ChatEngine engine, String runId) {
        return Await.until(() -> engine.state(ALICE, runId).run(), r -> r.status().isTerminal(), "the run to end");
    }

    private static String upload(ChatEngine engine, String threadId, String name, byte[] content) {
        return engine.attachments().upload(ALICE, threadId, name, null, new ByteArrayInputStream(content)).id();
    }

    private static ModelMessage.User user(ModelRequest request, int index) {
        return (ModelMessage.User) request.messages().get(index);
    }

    @Test
    void theQuestionsFilesGoWithItOnEveryCallAndLaterRunsSeeThemInTheHistory() {
        ScriptedModel model = ScriptedModel.replying(
                reply().toolCall(0, "call_1", "lookup_order", "{\"id\":1}").finish("tool_calls"),
                reply().text("A cat, and your notes."),
                reply().text("Still a cat."))
                .withAttachmentSupport(AttachmentSupport.of("image/*", "text/plain"));
        try (ChatEngine engine = engine(model, blobs)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            String photo = upload(engine, threadId, "cat.png", PNG);
            String notes = upload(engine, threadId, "notes.txt", NOTES);
            Run first = until(engine, engine.startRun(ALICE, threadId, StartRun.of("what is this?")
                    .withAttachments(List.of(photo, notes))).runId());
            assertThat(first.status()).isEqualTo(RunStatus.SUCCEEDED);
            Run second = until(engine, engine.startRun(ALICE, threadId, StartRun.of("sure?")).runId());
            assertThat(second.status()).isEqualTo(RunStatus.SUCCEEDED);

            List<ModelRequest> calls = model.requests();
            assertThat(calls).hasSize(3);
            ModelMessage.Attachment cat = new ModelMessage.Attachment("cat.png", "image/png", PNG);
            ModelMessage.Attachment text = new ModelMessage.Attachment("notes.txt", "text/plain", NOTES);
            for (ModelRequest call : calls.subList(0, 2)) {
                assertThat(user(call, 0).text()).isEqualTo("what is this?");
                assertThat(user(call, 0).attachments()).containsExactly(cat, text);
            }
            ModelRequest later = calls.get(2);
            assertThat(user(later, 0).attachments()).containsExactly(cat, text);
            ModelMessage.User question = (ModelMessage.User) later.messages().get(later.messages().size() - 1);
            assertThat(question.text()).isEqualTo("sure?");
            assertThat(question.attachments()).isEmpty();
            assertThat(user(later, 0).attachments().get(0).data()).isEqualTo(PNG);
        }
    }

    @Test
    void theRuntimeTakesWhatItsClientTakesAndTheEngineRefusesTheRest() {
        AttachmentSupport imagesOnly = new AttachmentSupport(Set.of("image/png"), "PNG images only, for a test");
        ScriptedModel model = ScriptedModel.replying(reply().text("ok")).withAttachmentSupport(imagesOnly);
        assertThat(AgentLoopRuntime.builder(model).build().attachmentSupport()).isEqualTo(imagesOnly);
        assertThat(AgentLoopRuntime.builder(ScriptedModel.replying(reply().text("ok"))).build().attachmentSupport())
                .isEqualTo(AttachmentSupport.NONE);
        try (ChatEngine engine = engine(model, blobs)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            assertThatThrownBy(() -> upload(engine, threadId, "r.pdf", PDF)).isInstanceOfSatisfying(
                    ChatException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT);
                        assertThat(e.getMessage()).contains("PNG images only, for a test");
                    });
            assertThat(blobs.size()).isZero();
        }
    }

    @Test
    void anEarlierFileTheModelCannotTakeIsNamedInItsMessageInstead() {
        ScriptedModel readsPdf = ScriptedModel.replying(reply().text("A report."))
                .withAttachmentSupport(AttachmentSupport.of("application/pdf", "image/*"));
        String threadId;
        try (ChatEngine engine = engine(readsPdf, blobs)) {
            threadId = engine.createThread(ALICE, NewThread.empty()).id();
            String pdf = upload(engine, threadId, "report.pdf", PDF);
            String photo = upload(engine, threadId, "cat.png", PNG);
            assertThat(until(engine, engine.startRun(ALICE, threadId, StartRun.of("read it")
                    .withAttachments(List.of(pdf, photo))).runId()).status()).isEqualTo(RunStatus.SUCCEEDED);
        }
        ScriptedModel imagesOnly = ScriptedModel.replying(reply().text("I saw a cat."))
                .withAttachmentSupport(AttachmentSupport.of("image/*"));
        try (ChatEngine engine = engine(imagesOnly, blobs)) {
            assertThat(until(engine, engine.startRun(ALICE, threadId, StartRun.of("and now?")).runId()).status())
                    .isEqualTo(RunStatus.SUCCEEDED);
        }

        ModelMessage.User earlier = user(imagesOnly.requests().get(0), 0);
        assertThat(earlier.text()).isEqualTo("read it\n\n[report.pdf (application/pdf) was attached; this model"
                + " cannot take it]");
        assertThat(earlier.attachments()).extracting(ModelMessage.Attachment::name).containsExactly("cat.png");
    }

    @Test
    void aFileThatCannotBeReadFailsTheRunBeforeTheModelIsCalled() {
        AtomicBoolean broken = new AtomicBoolean();
        BlobStore failing = new BlobStore() {
            @Override
            public String put(String ownerId, InputStream content) {
                return blobs.put(ownerId, content);
            }

            @Override
            public InputStream open(String key, long offset) {
                if (broken.get()) {
                    throw new ChatException(ErrorCode.STORE_FAILURE, "the blob store is down");
                }
                return blobs.open(key, offset);
            }

            @Override
            public void delete(String key) {
                blobs.delete(key);
            }

            @Override
            public void deleteOwner(String ownerId) {
                blobs.deleteOwner(ownerId);
            }
        };
        ScriptedModel model = ScriptedModel.replying(reply().text("never"))
                .withAttachmentSupport(AttachmentSupport.of("image/*"));
        try (ChatEngine engine = engine(model, failing)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            String photo = upload(engine, threadId, "cat.png", PNG);
            broken.set(true);
            Run run = until(engine, engine.startRun(ALICE, threadId, StartRun.of("look")
                    .withAttachments(List.of(photo))).runId());

            assertThat(run.status()).isEqualTo(RunStatus.FAILED);
            assertThat(run.error().code()).isEqualTo("STORE_FAILURE");
            assertThat(run.error().message()).contains("the blob store is down");
            assertThat(model.requests()).isEmpty();
        }
    }

    @Test
    void anAttachmentIsImmutableAndNeverPrintsItsBytes() {
        byte[] given = NOTES.clone();
        ModelMessage.Attachment notes = new ModelMessage.Attachment("notes \"v2\".txt", "Text/Plain", given);
        given[0] = 'X';
        notes.data()[1] = 'Y';

        assertThat(notes.data()).isEqualTo(NOTES);
        assertThat(notes.mediaType()).isEqualTo("text/plain");
        assertThat(notes.isText()).isTrue();
        assertThat(notes.isImage()).isFalse();
        assertThat(notes).isEqualTo(new ModelMessage.Attachment("notes \"v2\".txt", "text/plain", NOTES))
                .hasSameHashCodeAs(new ModelMessage.Attachment("notes \"v2\".txt", "text/plain", NOTES.clone()));
        assertThat(notes.toString()).isEqualTo("Attachment[name=notes \"v2\".txt, mediaType=text/plain, size=23]");
        assertThat(notes.asText()).isEqualTo("<file name=\"notes 'v2'.txt\" type=\"text/plain\">\nfirst line\n"
                + "second line\n</file>");
        assertThat(new ModelMessage.Attachment("a.png", "image/png", new byte[] {1, 2, 3}).dataUrl())
                .isEqualTo("data:image/png;base64,AQID");
        assertThat(new ModelMessage.User("hi").attachments()).isEmpty();
    }
}
