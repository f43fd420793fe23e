package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentLimits;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.attachment.InMemoryBlobStore;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Attachments through the engine: what is stored, what the runtime receives, and every way an upload is
 * refused with nothing kept.
 */
class AttachmentsTest extends EngineTestSupport {
    static final byte[] PNG = withHead(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 300);
    static final byte[] PDF = withHead("%PDF-1.7\n".getBytes(StandardCharsets.US_ASCII), 500);

    private final InMemoryBlobStore blobs = new InMemoryBlobStore();
    private final ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.answer("seen"))
            .withAttachmentSupport(AttachmentSupport.of("image/*", "application/pdf", "text/plain"));

    private ChatEngine engine() {
        return engine(limits -> {
        });
    }

    private ChatEngine engine(Consumer<AttachmentLimits.Builder> limits) {
        AttachmentLimits.Builder builder = AttachmentLimits.builder();
        limits.accept(builder);
        return engine(runtime, b -> b.blobStore(blobs).attachmentLimits(builder.build()));
    }

    private static byte[] withHead(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    private static InputStream in(byte[] bytes) {
        return new ByteArrayInputStream(bytes);
    }

    private static byte[] read(InputStream in) throws IOException {
        try (in) {
            return in.readAllBytes();
        }
    }

    @Test
    void anUploadSentWithAMessageReachesTheRuntimeAndIsListedOnTheMessage() throws IOException {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        Attachment photo = engine.attachments().upload(ALICE, thread.id(), "photo.png", "image/png", in(PNG));
        assertThat(photo.mediaType()).isEqualTo("image/png");
        assertThat(photo.size()).isEqualTo(PNG.length);
        assertThat(photo.sha256()).hasSize(64);

        RunTicket ticket = engine.startRun(ALICE, thread.id(), StartRun.of("what is this?")
                .withAttachments(List.of(photo.id())));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        RunRequest request = runtime.requests().get(0);
        MessageAttachment sent = new MessageAttachment(photo.id(), "photo.png", "image/png", PNG.length);
        assertThat(request.attachments()).containsExactly(sent);
        assertThat(request.attachmentContent().readAllBytes(sent)).isEqualTo(PNG);
        UserMessage stored = (UserMessage) store.findMessage(ticket.userMessageId()).orElseThrow();
        assertThat(stored.attachments()).containsExactly(sent);
        assertThat(read(engine.attachments().open(ALICE, photo.id(), 100)))
                .isEqualTo(Arrays.copyOfRange(PNG, 100, PNG.length));
    }

    @Test
    void theMarkdownExportListsAMessagesFilesLinkedWhereTheHostServesThem() throws IOException {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        Attachment photo = engine.attachments().upload(ALICE, thread.id(), "[cat]_1.png", "image/png", in(PNG));
        Attachment report = engine.attachments().upload(ALICE, thread.id(), "report.pdf", null, in(PDF));
        RunTicket ticket = engine.startRun(ALICE, thread.id(), StartRun.of("what are these?")
                .withAttachments(List.of(photo.id(), report.id())));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        java.io.ByteArrayOutputStream linked = new java.io.ByteArrayOutputStream();
        engine.exportThread(ALICE, thread.id(), ExportFormat.MARKDOWN, linked,
                file -> "https://chat.example/files/" + file.id());
        assertThat(linked.toString(StandardCharsets.UTF_8)).contains("**You:**\n\nwhat are these?\n\n"
                + "- [\\[cat\\]\\_1.png](<https://chat.example/files/" + photo.id() + ">) (image/png, "
                + PNG.length + " bytes)\n"
                + "- [report.pdf](<https://chat.example/files/" + report.id() + ">) (application/pdf, " + PDF.length
                + " bytes)\n");
        java.io.ByteArrayOutputStream named = new java.io.ByteArrayOutputStream();
        engine.exportThread(ALICE, thread.id(), ExportFormat.MARKDOWN, named);
        assertThat(named.toString(StandardCharsets.UTF_8)).contains("- report.pdf (application/pdf, " + PDF.length
                + " bytes)\n").doesNotContain("](");
    }

    @Test
    void aSaveThatFailsKeepsNoBytesAndOneThatTookEffectDespiteFailingIsTheUpload() throws IOException {
        ChatStore real = store;
        AtomicReference<String> mode = new AtomicReference<>("fail");
        store = InterceptedStore.keepingAttachments(real, (method, args, proceed) -> {
            if (!method.equals("saveAttachment")) {
                return proceed.call();
            }
            switch (mode.getAndSet("pass")) {
                case "fail" -> throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the save failed");
                case "lose" -> {
                    proceed.call();
                    throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the commit's answer was lost");
                }
                default -> {
                    return proceed.call();
                }
            }
        });
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());

        assertCode(ErrorCode.STORE_FAILURE, () -> engine.attachments().upload(ALICE, thread.id(), "a.png", null, in(PNG)));
        assertThat(blobs.size()).as("no bytes without a row").isZero();
        assertThat(((AttachmentStore) real).storedAttachmentBytes(ALICE)).isZero();

        mode.set("lose");
        Attachment saved = engine.attachments().upload(ALICE, thread.id(), "b.png", null, in(PNG));
        assertThat(read(engine.attachments().open(ALICE, saved.id(), 0))).isEqualTo(PNG);
        assertThat(blobs.size()).isEqualTo(1);
    }

    @Test
    void theNextRunSeesEarlierAttachmentsInItsHistory() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        Attachment pdf = engine.attachments().upload(ALICE, thread.id(), "report.pdf", null, in(PDF));
        awaitRun(engine, engine.startRun(ALICE, thread.id(), StartRun.of("read it").withAttachments(List.of(pdf.id())))
                .runId(), RunStatus.SUCCEEDED);
        awaitRun(engine, engine.startRun(ALICE, thread.id(), StartRun.of("and then?")).runId(), RunStatus.SUCCEEDED);

        RunRequest second = runtime.requests().get(1);
        assertThat(second.attachments()).isEmpty();
        List<Message> history = second.history().messages();
        UserMessage first = (UserMessage) history.get(0);
        assertThat(first.attachments()).extracting(MessageAttachment::mediaType).containsExactly("application/pdf");
        assertThat(second.attachmentContent().readAllBytes(first.attachments().get(0))).isEqualTo(PDF);
    }

    @Test
    void contentThatContradictsItsClaimedTypeIsRefusedAndNothingIsKept() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.attachments().upload(ALICE, thread.id(), "cat.png",
                "image/png", in(PDF)));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.attachments().upload(ALICE, thread.id(), "notes.txt",
                "text/plain", in(PNG)));
        assertThat(blobs.size()).isZero();
        assertThat(((dev.parley.chat.attachment.AttachmentStore) store).storedAttachmentBytes(ALICE)).isZero();
    }

    @Test
    void htmlIsRefusedWhateverItClaimsToBe() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        byte[] page = "  <!DOCTYPE html><script>alert(1)</script>".getBytes(StandardCharsets.UTF_8);
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.attachments().upload(ALICE, thread.id(), "page.txt",
                "text/plain", in(page)));
        byte[] svg = "<svg xmlns='http://www.w3.org/2000/svg'><script/></svg>".getBytes(StandardCharsets.UTF_8);
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.attachments().upload(ALICE, thread.id(), "x.png", null,
                in(svg)));
        assertThat(blobs.size()).isZero();
    }

    @Test
    void aHugeUploadIsCutOffEarlyAndNothingIsKept() {
        ChatEngine engine = engine(limits -> limits.maxFileBytes(64 * 1024));
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        AtomicLong served = new AtomicLong();
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                served.incrementAndGet();
                return 'a';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                int n = Math.min(len, 8192);
                Arrays.fill(b, off, off + n, (byte) 'a');
                served.addAndGet(n);
                return n;
            }
        };
        assertCode(ErrorCode.TOO_LARGE, () -> engine.attachments().upload(ALICE, thread.id(), "big.txt", null,
                endless));
        assertThat(served.get()).isLessThan(64 * 1024 + 2 * 8192);
        assertThat(blobs.size()).isZero();
    }

    @Test
    void anUploadCutOffByItsSenderKeepsNothing() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        InputStream breaks = new InputStream() {
            private int left = 10_000;

            @Override
            public int read() throws IOException {
                if (left == 0) {
                    throw new IOException("connection reset");
                }
                left--;
                return 'b';
            }
        };
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.attachments().upload(ALICE, thread.id(), "b.txt", null,
                breaks));
        assertThat(blobs.size()).isZero();
    }

    @Test
    void aTypeTheRuntimeCannotTakeIsRefusedBeforeAnythingIsStored() {
        ScriptedRuntime imagesOnly = ScriptedRuntime.playing(Scripts.answer("ok"))
                .withAttachmentSupport(new AttachmentSupport(java.util.Set.of("image/*"), "images only, for a test"));
        ChatEngine engine = engine(imagesOnly, b -> b.blobStore(blobs));
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> engine.attachments().upload(ALICE, thread.id(),
                "r.pdf", "application/pdf", in(PDF))).hasMessageContaining("images only, for a test");
        assertThat(blobs.size()).isZero();
        ChatEngine none = engine(ScriptedRuntime.playing(Scripts.answer("ok")), b -> b.blobStore(blobs));
        assertCode(ErrorCode.INVALID_INPUT, () -> none.attachments().upload(ALICE, thread.id(), "p.png", null, in(PNG)));
        assertThat(blobs.size()).isZero();
    }

    @Test
    void anotherOwnerSeesNothingAndCannotSendIt() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        Attachment photo = engine.attachments().upload(ALICE, thread.id(), "photo.png", null, in(PNG));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.attachments().find(MALLORY, photo.id()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.attachments().open(MALLORY, photo.id(), 0));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.attachments().upload(MALLORY, thread.id(), "x.png", null, in(PNG)));
        ChatThread hers = engine.createThread(MALLORY, NewThread.empty());
        assertCode(ErrorCode.NOT_FOUND, () -> engine.startRun(MALLORY, hers.id(),
                StartRun.of("mine now").withAttachments(List.of(photo.id()))));
        ChatThread other = engine.createThread(ALICE, NewThread.empty());
        assertCode(ErrorCode.NOT_FOUND, () -> engine.startRun(ALICE, other.id(),
                StartRun.of("from another thread").withAttachments(List.of(photo.id()))));
        assertThat(store.listTopLevelMessages(hers.id(), null, 10)).isEmpty();
        assertThat(store.listTopLevelMessages(other.id(), null, 10)).isEmpty();
    }

    @Test
    void equalFilesAreStoredOnceAndFreedWithTheirLastThread() throws IOException {
        ChatEngine engine = engine();
        ChatThread first = engine.createThread(ALICE, NewThread.empty());
        ChatThread second = engine.createThread(ALICE, NewThread.empty());
        Attachment a = engine.attachments().upload(ALICE, first.id(), "a.png", null, in(PNG));
        Attachment b = engine.attachments().upload(ALICE, second.id(), "b.png", null, in(PNG));
        ChatThread hers = engine.createThread(MALLORY, NewThread.empty());
        engine.attachments().upload(MALLORY, hers.id(), "c.png", null, in(PNG));
        assertThat(b.blobKey()).isEqualTo(a.blobKey());
        assertThat(blobs.size()).isEqualTo(2);

        engine.deleteThread(ALICE, first.id());
        assertCode(ErrorCode.NOT_FOUND, () -> engine.attachments().find(ALICE, a.id()));
        assertThat(read(engine.attachments().open(ALICE, b.id(), 0))).isEqualTo(PNG);
        engine.deleteThread(ALICE, second.id());
        assertThat(blobs.size()).isEqualTo(1);
    }

    /**
     * Found by the simulation: an attachment row whose save took effect though its answer was lost kept naming
     * the blob the failed upload then deleted; the next upload of the same bytes shared that blob and could not
     * be read. The row is read back: the upload was stored, and it is returned with its bytes.
     */
    @Test
    void anUploadWhoseSaveTookEffectThoughItFailedKeepsItsBytes() throws IOException {
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean(true);
        store = InterceptedStore.keepingAttachments(store, (method, args, proceed) -> {
            Object result = proceed.call();
            if (method.equals("saveAttachment") && armed.getAndSet(false)) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: the answer was lost");
            }
            return result;
        });
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        Attachment first = engine.attachments().upload(ALICE, thread.id(), "a.png", null, in(PNG));
        assertThat(armed).isFalse();
        Attachment again = engine.attachments().upload(ALICE, thread.id(), "b.png", null, in(PNG));

        assertThat(read(engine.attachments().open(ALICE, first.id(), 0))).isEqualTo(PNG);
        assertThat(read(engine.attachments().open(ALICE, again.id(), 0))).isEqualTo(PNG);
        assertThat(again.blobKey()).isEqualTo(first.blobKey());
        assertThat(blobs.size()).isEqualTo(1);
    }

    @Test
    void erasingAnOwnerLeavesNoneOfTheirBytes() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        engine.attachments().upload(ALICE, thread.id(), "a.png", null, in(PNG));
        engine.attachments().upload(ALICE, thread.id(), "r.pdf", null, in(PDF));
        ChatThread hers = engine.createThread(MALLORY, NewThread.empty());
        Attachment kept = engine.attachments().upload(MALLORY, hers.id(), "c.png", null, in(PNG));

        assertThat(engine.eraseOwner(ALICE)).isEqualTo(1);

        assertThat(blobs.size()).isEqualTo(1);
        assertThat(engine.attachments().find(MALLORY, kept.id())).isEqualTo(kept);
    }

    @Test
    void aMessageBeyondThePerMessageLimitsStartsNothing() {
        ChatEngine engine = engine(limits -> limits.maxFilesPerMessage(2).maxBytesPerMessage(PNG.length + PDF.length - 1));
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        String a = engine.attachments().upload(ALICE, thread.id(), "a.png", null, in(PNG)).id();
        String b = engine.attachments().upload(ALICE, thread.id(), "b.pdf", null, in(PDF)).id();
        String c = engine.attachments().upload(ALICE, thread.id(), "c.txt", null,
                in("plain words".getBytes(StandardCharsets.UTF_8))).id();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, thread.id(),
                StartRun.of("three").withAttachments(List.of(a, b, c))));
        assertCode(ErrorCode.TOO_LARGE, () -> engine.startRun(ALICE, thread.id(),
                StartRun.of("too many bytes").withAttachments(List.of(a, b))));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, thread.id(),
                StartRun.of("twice").withAttachments(List.of(a, a))));
        assertThat(store.listTopLevelMessages(thread.id(), null, 10)).isEmpty();
        awaitRun(engine, engine.startRun(ALICE, thread.id(), StartRun.of("two").withAttachments(List.of(a, c))).runId(),
                RunStatus.SUCCEEDED);
    }

    @Test
    void anOwnerPastTheirQuotaIsRefused() {
        ChatEngine engine = engine(limits -> limits.maxBytesPerOwner(PNG.length + 100));
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        engine.attachments().upload(ALICE, thread.id(), "a.png", null, in(PNG));
        assertCode(ErrorCode.TOO_LARGE, () -> engine.attachments().upload(ALICE, thread.id(), "r.pdf", null, in(PDF)));
        assertThat(blobs.size()).isEqualTo(1);
        ChatThread hers = engine.createThread(MALLORY, NewThread.empty());
        assertThat(engine.attachments().upload(MALLORY, hers.id(), "m.png", null, in(PNG)).size()).isEqualTo(PNG.length);
    }

    @Test
    void namesAreSanitisedAndTextGetsItsTypeFromTheContentAndExtension() {
        ChatEngine engine = engine();
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        Attachment notes = engine.attachments().upload(ALICE, thread.id(), "../../etc/pass\u0000wd\u202e.txt",
                "application/octet-stream", in("héllo".getBytes(StandardCharsets.UTF_8)));
        assertThat(notes.name()).isEqualTo("passwd.txt");
        assertThat(notes.mediaType()).isEqualTo("text/plain");
    }

    @Test
    void theAcceptedTypesAreThoseBothTheLimitsAndTheRuntimeTake() {
        assertThat(engine().attachments().acceptedTypes()).containsExactly("application/pdf", "image/gif",
                "image/jpeg", "image/png", "image/webp", "text/plain");
        ChatEngine wholeFamilies = engine(limits -> limits.allowedTypes(java.util.Set.of("image/*", "audio/*",
                "text/plain")));
        assertThat(wholeFamilies.attachments().acceptedTypes()).containsExactly("image/*", "text/plain");
        ScriptedRuntime pngOnly = ScriptedRuntime.playing(Scripts.answer("ok"))
                .withAttachmentSupport(AttachmentSupport.of("image/png"));
        assertThat(engine(pngOnly, b -> b.blobStore(blobs).attachmentLimits(AttachmentLimits.builder()
                .allowedTypes(java.util.Set.of("image/*")).build())).attachments().acceptedTypes())
                .containsExactly("image/png");
        assertThat(engine(ScriptedRuntime.playing(Scripts.answer("ok")), b -> b.blobStore(blobs)).attachments()
                .acceptedTypes()).as("a runtime that takes none").isEmpty();
    }

    @Test
    void aHostWhoseStoreKeepsNoAttachmentsSaysSo() {
        store = InterceptedStore.of(store, (method, args, proceed) -> proceed.call());
        ChatEngine engine = engine(runtime, b -> b.blobStore(blobs));
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        assertThat(engine.attachments().enabled()).isFalse();
        assertThat(engine.attachments().acceptedTypes()).isEmpty();
        assertCode(ErrorCode.UNSUPPORTED, () -> engine.attachments().upload(ALICE, thread.id(), "a.png", null, in(PNG)));
        assertCode(ErrorCode.UNSUPPORTED, () -> engine.startRun(ALICE, thread.id(),
                StartRun.of("x").withAttachments(List.of("some-id"))));
    }
}
