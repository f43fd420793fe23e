package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentLimits;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.UserMessage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The operations on attachments, run as a caller of {@link ChatEngine#attachments()} would, checking what the
 * API promises about each call: an upload holds the bytes sent; a mislabelled, oversized or misdirected upload
 * is refused with nothing stored; a message sending another thread's or another owner's file is refused with
 * nothing stored; an upload reads back as sent from any offset while its thread lives, and not after; another
 * owner's upload is NOT_FOUND; an erased owner has no attachment row and no byte left.
 */
final class FileOps {
    /** Small limits, so that the per-file and per-owner limits are reached. */
    static final AttachmentLimits LIMITS = AttachmentLimits.builder().maxFileBytes(2048).maxBytesPerOwner(1500)
            .build();

    /** One of the few files the simulation uploads, and a type that contradicts its content. */
    record File(String name, String type, byte[] bytes, String mislabel) {
    }

    /** Few fixed contents, so that an owner uploads equal files (stored once) and owners share contents. */
    static final List<File> FILES = List.of(
            new File("photo.png", "image/png", binary(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A},
                    300, 7), "application/pdf"),
            new File("other.png", "image/png", binary(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A},
                    300, 11), "application/pdf"),
            new File("report.pdf", "application/pdf", binary("%PDF-1.7\n".getBytes(StandardCharsets.US_ASCII), 500, 3),
                    "image/png"),
            new File("notes.txt", "text/plain", text(200), "image/png"));
    /** Past {@link #LIMITS}' bytes per file. */
    static final byte[] OVERSIZED = text(3000);

    private final World world;

    FileOps(World world) {
        this.world = world;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] binary(byte[] head, int size, int step) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * step + 7);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    private static byte[] text(int size) {
        StringBuilder text = new StringBuilder();
        for (int line = 1; text.length() < size; line++) {
            text.append("Line ").append(line).append(" of the notes.\n");
        }
        return text.substring(0, size).getBytes(StandardCharsets.US_ASCII);
    }

    void upload(ChatEngine engine, Op.Upload op) {
        World.ThreadRef thread = world.current(world.thread(op.thread()));
        if (thread == null) {
            return;
        }
        File file = FILES.get(op.file());
        boolean oversized = op.kind() == Op.UploadKind.TOO_LARGE;
        String owner = op.kind() == Op.UploadKind.OTHER_OWNER ? world.otherOwner(thread.owner()) : thread.owner();
        World.Trace trace = World.Trace.start();
        long faultsBefore = world.faults.injectedHere();
        Attachment uploaded = null;
        ChatException refused = null;
        world.trace.set(trace);
        try {
            uploaded = engine.attachments().upload(owner, thread.id(), oversized ? "big.txt" : file.name(),
                    oversized ? "text/plain" : op.kind() == Op.UploadKind.MISLABELLED ? file.mislabel() : file.type(),
                    new ByteArrayInputStream(oversized ? OVERSIZED : file.bytes()));
        } catch (ChatException e) {
            refused = e;
        } finally {
            world.trace.remove();
        }
        if (world.faults.injectedHere() > faultsBefore) {
            trace.puts().forEach(key -> world.interruptedBlobs.put(key, owner));
        }
        if (op.kind() == Op.UploadKind.RIGHT) {
            if (uploaded != null) {
                uploadedAsSent(op, thread, file, uploaded);
            } else if (Set.of(ErrorCode.INVALID_INPUT, ErrorCode.UNSUPPORTED, ErrorCode.CONFLICT)
                    .contains(refused.code())) {
                world.violated("an upload holds the bytes sent", "op " + op.id() + " " + op + " was refused: "
                        + refused.code() + " " + refused.getMessage());
            }
            return;
        }
        ErrorCode expected = switch (op.kind()) {
            case MISLABELLED -> ErrorCode.INVALID_INPUT;
            case TOO_LARGE -> ErrorCode.TOO_LARGE;
            default -> ErrorCode.NOT_FOUND;
        };
        if (uploaded != null || !EnumSet.of(expected, ErrorCode.NOT_FOUND, ErrorCode.STORE_FAILURE)
                .contains(refused.code())) {
            world.violated("bad input is refused", "op " + op.id() + " " + op + " answered "
                    + (uploaded != null ? "with attachment " + uploaded.id() : refused.code() + " " + refused.getMessage()));
        }
        if (!trace.puts().isEmpty() || trace.saves().get() > 0) {
            world.violated("bad input changes nothing", "op " + op.id() + " " + op + ", refused, stored "
                    + trace.puts().size() + " blob(s) and " + trace.saves().get() + " attachment row(s)");
        }
    }

    private void uploadedAsSent(Op op, World.ThreadRef thread, File file, Attachment uploaded) {
        if (!uploaded.sha256().equals(sha256(file.bytes())) || uploaded.size() != file.bytes().length
                || !uploaded.ownerId().equals(thread.owner()) || !uploaded.threadId().equals(thread.id())
                || !uploaded.mediaType().equals(file.type()) || !uploaded.name().equals(file.name())) {
            world.violated("an upload holds the bytes sent", "op " + op.id() + ": " + file.name() + " ("
                    + file.bytes().length + " bytes, " + file.type() + ") to thread " + thread.id() + " of "
                    + thread.owner() + " was stored as " + uploaded);
        }
        world.uploads.add(new World.Upload(uploaded, FILES.indexOf(file), thread));
    }

    /**
     * Sends a message with files: for its thread's own, to the thread of the {@code thread}-th upload (so that
     * the files reach the runtime often); for another's, to the {@code thread}-th thread.
     */
    void sendFiles(ChatEngine engine, Op.SendFiles op) {
        List<World.Upload> known = world.uploads;
        World.ThreadRef thread = world.current(op.from() != Op.FilesFrom.THREAD ? world.thread(op.thread())
                : known.isEmpty() ? null : known.get(Math.floorMod(op.thread(), known.size())).thread());
        if (thread == null) {
            return;
        }
        List<World.Upload> own = world.uploads.stream().filter(u -> u.thread().equals(thread)).toList();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < Math.min(op.count(), own.size()); i++) {
            ids.add(own.get(Math.floorMod(op.thread() + i, own.size())).attachment().id());
        }
        ids = ids.stream().distinct().collect(Collectors.toCollection(ArrayList::new));
        if (op.from() == Op.FilesFrom.THREAD) {
            if (!ids.isEmpty()) {
                sendOwn(engine, op, thread, ids);
            }
            return;
        }
        List<World.Upload> foreign = world.uploads.stream().filter(u -> op.from() == Op.FilesFrom.OTHER_OWNER
                ? !u.thread().owner().equals(thread.owner())
                : u.thread().owner().equals(thread.owner()) && !u.thread().equals(thread)).toList();
        if (foreign.isEmpty()) {
            return;
        }
        ids.add(foreign.get(Math.floorMod(op.thread(), foreign.size())).attachment().id());
        String clientId = "sim-" + op.id();
        try {
            engine.startRun(thread.owner(), thread.id(), World.message(op.script()).withClientMessageId(clientId)
                    .withAttachments(ids));
            world.violated("a message lists only its owner's files from its thread", "op " + op.id() + " " + op
                    + " sent " + ids + " from thread " + thread.id() + " of " + thread.owner());
        } catch (ChatException e) {
            if (world.store.findUserMessageByClientId(thread.id(), clientId).isPresent()) {
                world.violated("bad input changes nothing", "op " + op.id() + " " + op + " was refused ("
                        + e.code() + ") but its message was stored");
            }
        }
    }

    private void sendOwn(ChatEngine engine, Op.SendFiles op, World.ThreadRef thread, List<String> ids) {
        long faultsBefore = world.faults.injectedHere();
        long mark = world.deletionMark();
        RunTicket ticket;
        try {
            ticket = engine.startRun(thread.owner(), thread.id(), World.message(op.script()).withAttachments(ids));
        } catch (ChatException e) {
            if (e.code() == ErrorCode.NOT_FOUND && world.faults.injectedHere() == faultsBefore
                    && world.noDeletionSince(mark) && world.current(thread) != null) {
                world.violated("a thread's uploads can be sent with its messages", "op " + op.id() + " " + op
                        + ": sending " + ids + " to thread " + thread.id() + " was NOT_FOUND: " + e.getMessage());
            }
            return;
        }
        world.runStarted(ticket, thread.owner(), true);
        world.store.findMessage(ticket.userMessageId()).ifPresent(message -> {
            List<String> listed = message instanceof UserMessage user
                    ? user.attachments().stream().map(MessageAttachment::id).toList() : List.of();
            if (!listed.equals(ids)) {
                world.violated("a message lists the files sent with it", "op " + op.id() + ": message "
                        + message.id() + " was sent with " + ids + " and lists " + listed);
            }
        });
    }

    void openFile(ChatEngine engine, Op.OpenFile op) {
        List<World.Upload> known = world.uploads;
        if (known.isEmpty()) {
            return;
        }
        World.Upload upload = known.get(Math.floorMod(op.upload(), known.size()));
        Attachment attachment = upload.attachment();
        byte[] bytes = FILES.get(upload.file()).bytes();
        long offset = switch (op.offset()) {
            case 0 -> 0;
            case 1 -> bytes.length / 2;
            case 2 -> bytes.length;
            default -> bytes.length + 1L;
        };
        if (op.otherOwner()) {
            String other = world.otherOwner(attachment.ownerId());
            refusedAsNotFound(op, () -> engine.attachments().find(other, attachment.id()));
            refusedAsNotFound(op, () -> engine.attachments().open(other, attachment.id(), 0));
            return;
        }
        boolean liveBefore = world.current(upload.thread()) != null;
        long faultsBefore = world.faults.injectedHere();
        String failure;
        try (InputStream in = engine.attachments().open(attachment.ownerId(), attachment.id(), offset)) {
            byte[] got = in.readAllBytes();
            if (!liveBefore) {
                world.violated("deleted data stays deleted", "op " + op.id() + ": attachment " + attachment.id()
                        + " of deleted thread " + upload.thread().id() + " could still be read");
            } else if (offset > bytes.length) {
                world.violated("bad input is refused", "op " + op.id() + ": attachment " + attachment.id()
                        + " opened at " + offset + ", past its " + bytes.length + " bytes");
            } else if (!Arrays.equals(got, Arrays.copyOfRange(bytes, (int) offset, bytes.length))) {
                world.violated("an upload reads back as sent", "op " + op.id() + ": attachment " + attachment.id()
                        + " from " + offset + " read " + got.length + " bytes of sha " + sha256(got));
            }
            return;
        } catch (ChatException e) {
            if (e.code() == ErrorCode.INVALID_INPUT && offset > bytes.length) {
                return;
            }
            failure = e.code() + " " + e.getMessage();
        } catch (IOException e) {
            failure = e.toString();
        }
        if (liveBefore && world.faults.injectedHere() == faultsBefore && world.current(upload.thread()) != null) {
            world.violated("an upload reads back as sent", "op " + op.id() + ": attachment " + attachment.id()
                    + " of live thread " + upload.thread().id() + " from " + offset + " failed: " + failure);
        }
    }

    private void refusedAsNotFound(Op op, Supplier<?> call) {
        try {
            Object shown = call.get();
            if (shown instanceof InputStream stream) {
                stream.close();
            }
            world.violated("another owner's ids are NOT_FOUND", "op " + op.id() + " " + op
                    + " showed an attachment to another owner");
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND && e.code() != ErrorCode.STORE_FAILURE) {
                world.violated("another owner's ids are NOT_FOUND", "op " + op.id() + " " + op + " answered "
                        + e.code() + " to another owner");
            }
        } catch (IOException e) {
            world.violated("another owner's ids are NOT_FOUND", "op " + op.id() + " " + op + ": " + e);
        }
    }

    /** What an erasure must remove: the owner's attachment rows and blobs as they are before it starts. */
    record BeforeErasure(String owner, Set<String> rows, Set<String> blobs) {
    }

    BeforeErasure beforeErasure(String owner) {
        Set<String> rows = world.savedAttachments.values().stream().filter(a -> a.ownerId().equals(owner))
                .map(Attachment::id).collect(Collectors.toSet());
        Set<String> blobs = world.database.blobOwners().entrySet().stream().filter(e -> e.getValue().equals(owner))
                .map(Map.Entry::getKey).collect(Collectors.toSet());
        return new BeforeErasure(owner, rows, blobs);
    }

    /** After an erasure returned: none of the owner's rows or bytes from before it is left. */
    void erased(Op op, BeforeErasure before) {
        List<Attachment> rows = ((AttachmentStore) world.store).findAttachments(before.rows());
        Set<String> blobs = world.database.blobOwners().keySet();
        List<String> left = before.blobs().stream().filter(blobs::contains).toList();
        if (!rows.isEmpty() || !left.isEmpty()) {
            world.violated("an erased owner has no attachment and no byte left", "op " + op.id() + " erased "
                    + before.owner() + ", who still has attachment rows "
                    + rows.stream().map(Attachment::id).toList() + " and blobs " + left);
        }
    }
}
