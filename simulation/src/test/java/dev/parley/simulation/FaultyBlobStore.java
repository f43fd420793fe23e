package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.BlobStore;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * An instance's blob store with the simulation's hand on every call, as its chat store has: a call fails
 * before it is made, fails after it took effect (a put whose key was lost on the way back, a delete whose
 * answer was), or is slow; every call of a dead instance fails. The keys a put returned are noted for the
 * operation whose upload made them ({@link World#trace}). Thread-safe.
 */
final class FaultyBlobStore implements BlobStore {
    private final BlobStore real;
    private final Faults faults;
    private final AtomicBoolean killed;
    private final World world;

    FaultyBlobStore(BlobStore real, Faults faults, AtomicBoolean killed, World world) {
        this.real = real;
        this.faults = faults;
        this.killed = killed;
        this.world = world;
    }

    @Override
    public String put(String ownerId, InputStream content) {
        return call("blob.put", () -> {
            String key = real.put(ownerId, content);
            World.Trace trace = world.trace.get();
            if (trace != null) {
                trace.puts().add(key);
            }
            return key;
        });
    }

    @Override
    public InputStream open(String key, long offset) {
        return call("blob.open", () -> real.open(key, offset));
    }

    @Override
    public void delete(String key) {
        call("blob.delete", () -> {
            real.delete(key);
            return null;
        });
    }

    @Override
    public void deleteOwner(String ownerId) {
        call("blob.deleteOwner", () -> {
            real.deleteOwner(ownerId);
            return null;
        });
    }

    private <T> T call(String method, Supplier<T> proceed) {
        if (killed.get()) {
            faults.noteHere();
            throw new ChatException(ErrorCode.STORE_FAILURE, "simulated: this instance is dead (" + method + ")");
        }
        faults.beforeStoreCall(method);
        T result = proceed.get();
        faults.afterStoreCall(method);
        return result;
    }
}
