package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.RunRequest;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The promises about attachments, checked against a world after every step and at the end (named as in
 * docs/RELIABILITY.md): the runtime gets the bytes uploaded; a message lists only its owner's files of its
 * thread; another owner's file is NOT_FOUND; every stored byte belongs to a live attachment, to a blob a
 * deleted thread freed (until the next delete deletes it) or to an upload a fault interrupted (until the owner
 * is erased), and every live attachment's bytes are kept; the bytes counted per owner are those of the live
 * attachments. The store and the blob store are read without faults.
 */
final class FileChecks {
    private final World world;
    private final AttachmentStore store;
    private int filesChecked;
    private final Set<String> questionsChecked = new HashSet<>();
    private final Set<String> withFiles = new HashSet<>();
    private long checks;

    FileChecks(World world) {
        this.world = world;
        this.store = (AttachmentStore) world.store;
    }

    long count() {
        return checks;
    }

    void afterStep() {
        theRuntimeGetsTheBytesUploaded();
        messagesListOnlyTheirOwnersFiles();
        anotherOwnersFilesAreNotFound();
        everyStoredByteIsAccountedFor(false);
    }

    /**
     * After {@link #afterStep()}'s at the end: a delete (faults are off) deletes the blobs earlier deletes freed
     * but could not delete, and no blob remains but the live attachments' and the interrupted uploads'.
     */
    void atTheEnd() {
        try {
            ChatThread spare = world.engine(0).createThread(World.OWNERS.get(0), NewThread.empty());
            world.engine(0).deleteThread(spare.ownerId(), spare.id());
        } catch (ChatException e) {
            violated("every thread takes the next message", "a thread created and deleted after the wind-down: "
                    + e.code() + " " + e.getMessage());
            return;
        }
        everyStoredByteIsAccountedFor(true);
    }

    private void violated(String invariant, String detail) {
        world.violated(invariant, detail);
    }

    /** What reached the runtime for each file a question listed: the bytes uploaded, readable while the thread lives. */
    private void theRuntimeGetsTheBytesUploaded() {
        checks++;
        Map<String, World.Upload> uploads = new HashMap<>();
        world.uploads.forEach(upload -> uploads.put(upload.attachment().id(), upload));
        List<SimRuntime.ReceivedFile> files = world.runtime.files();
        for (int i = filesChecked; i < files.size(); i++) {
            SimRuntime.ReceivedFile file = files.get(i);
            RunRequest request = file.request();
            World.Upload upload = uploads.get(file.listed().id());
            if (upload == null || !upload.attachment().ownerId().equals(request.ownerId())
                    || !upload.attachment().threadId().equals(request.threadId())
                    || !upload.attachment().toMessageAttachment().equals(file.listed())) {
                violated("a message lists only its owner's files from its thread", "run " + request.runId() + " of "
                        + request.ownerId() + " in thread " + request.threadId() + " got " + file.listed()
                        + ", uploaded as " + (upload == null ? "nothing" : upload.attachment()));
                continue;
            }
            String sent = FileOps.sha256(FileOps.FILES.get(upload.file()).bytes());
            if (file.sha256() != null && !file.sha256().equals(sent)) {
                violated("the runtime gets the bytes uploaded", "run " + request.runId() + " read " + file.size()
                        + " bytes of sha " + file.sha256() + " for " + file.listed() + ", uploaded with sha " + sent);
            } else if (file.sha256() == null && !file.faulted() && stillThere(request)) {
                violated("the runtime gets the bytes uploaded", "run " + request.runId() + " could not read "
                        + file.listed() + " (" + file.failure() + ") though its thread " + request.threadId()
                        + " lives and no fault was injected");
            }
        }
        filesChecked = files.size();
    }

    /** The request's thread is still there: deletion is final, so it was there all along. */
    private boolean stillThere(RunRequest request) {
        return world.store.findThread(request.threadId())
                .map(t -> RunRequest.conversationKey(t.id(), t.createdAt()).equals(request.conversationKey()))
                .orElse(false);
    }

    /**
     * Every stored question's files are its owner's, uploaded to its thread and listed as uploaded (checked once
     * per question: a question's files never change), and stay there while the question does.
     */
    private void messagesListOnlyTheirOwnersFiles() {
        checks++;
        Set<String> fresh = new HashSet<>(world.storedMessages.keySet());
        fresh.removeAll(questionsChecked);
        for (Message message : world.store.findMessages(fresh)) {
            questionsChecked.add(message.id());
            if (message instanceof UserMessage question && !question.attachments().isEmpty()) {
                withFiles.add(question.id());
                world.store.findThread(message.threadId()).ifPresent(thread -> {
                    for (MessageAttachment listed : question.attachments()) {
                        Attachment saved = world.savedAttachments.get(listed.id());
                        if (saved == null || !saved.ownerId().equals(thread.ownerId())
                                || !saved.threadId().equals(message.threadId())
                                || !saved.toMessageAttachment().equals(listed)) {
                            violated("a message lists only its owner's files from its thread", "message "
                                    + message.id() + " of " + thread.ownerId() + " in thread " + message.threadId()
                                    + " lists " + listed + ", stored as " + saved);
                        }
                    }
                });
            }
        }
        for (Message message : world.store.findMessages(withFiles)) {
            List<String> listed = ((UserMessage) message).attachments().stream().map(MessageAttachment::id).toList();
            Set<String> live = new HashSet<>();
            store.findAttachments(listed).forEach(a -> live.add(a.id()));
            listed.stream().filter(id -> !live.contains(id)).findFirst().ifPresent(id -> violated(
                    "deleted data stays deleted", "message " + message.id() + " of live thread " + message.threadId()
                            + " lists attachment " + id + ", which is gone"));
        }
    }

    private void anotherOwnersFilesAreNotFound() {
        checks++;
        List<World.Upload> uploads = world.uploads;
        if (uploads.isEmpty()) {
            return;
        }
        Attachment attachment = uploads.get((int) Math.floorMod(checks * 7919, uploads.size())).attachment();
        try {
            world.engine(0).attachments().find(world.otherOwner(attachment.ownerId()), attachment.id());
            violated("another owner's ids are NOT_FOUND", "attachment " + attachment.id() + " of "
                    + attachment.ownerId() + " was shown to another owner");
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND && e.code() != ErrorCode.STORE_FAILURE) {
                violated("another owner's ids are NOT_FOUND", "attachment " + attachment.id() + ": " + e.code());
            }
        }
    }

    /**
     * The bytes in the blob store and the rows that name them agree: each live attachment's blob is kept (and
     * is its owner's); each kept blob is a live attachment's, one a deleted thread freed (listed for deletion;
     * not {@code afterAPurge}, when the last delete deleted them), or one an interrupted upload left (until its
     * owner is erased); each owner's counted bytes are those of their live attachments' blobs, each once.
     */
    private void everyStoredByteIsAccountedFor(boolean afterAPurge) {
        checks++;
        Map<String, String> held = world.database.blobOwners();
        List<Attachment> live = store.findAttachments(world.savedAttachments.keySet());
        Map<String, Map<String, Long>> bytesByOwner = new HashMap<>();
        Set<String> referenced = new HashSet<>();
        for (Attachment attachment : live) {
            referenced.add(attachment.blobKey());
            bytesByOwner.computeIfAbsent(attachment.ownerId(), o -> new HashMap<>())
                    .put(attachment.blobKey(), attachment.size());
            if (!attachment.ownerId().equals(held.get(attachment.blobKey()))) {
                violated("a live attachment's bytes are kept", "attachment " + attachment.id() + " of "
                        + attachment.ownerId() + " in thread " + attachment.threadId() + " names blob "
                        + attachment.blobKey() + ", which the blob store " + (held.containsKey(attachment.blobKey())
                                ? "keeps for " + held.get(attachment.blobKey()) : "does not hold"));
            }
        }
        List<String> pending = store.unreferencedBlobs(100_000);
        if (afterAPurge && !pending.isEmpty()) {
            violated("deleted data stays deleted", "after a delete without faults, blobs " + pending
                    + " are still listed as freed");
        }
        held.forEach((key, owner) -> {
            if (!referenced.contains(key) && !pending.contains(key) && !world.interruptedBlobs.containsKey(key)) {
                violated("deleted data stays deleted", "blob " + key + " of " + owner + " is kept, but no live"
                        + " attachment names it, no delete freed it and no interrupted upload left it");
            }
        });
        for (String owner : World.OWNERS) {
            long counted = store.storedAttachmentBytes(owner);
            long expected = bytesByOwner.getOrDefault(owner, Map.of()).values().stream().mapToLong(Long::longValue).sum();
            if (counted != expected) {
                violated("an owner's stored bytes are their live attachments'", owner + " is counted " + counted
                        + " bytes, their live attachments' blobs hold " + expected);
            }
        }
    }
}
