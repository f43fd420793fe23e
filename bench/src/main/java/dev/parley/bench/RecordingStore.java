package dev.parley.bench;

import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wraps a {@link ChatStore} to measure the store's share of a run: how many batched writes the engine made,
 * how many events and messages they held, how long the store took for them, and for the synchronous seq
 * reservations. Every call is passed on unchanged (a dynamic proxy, so it follows the SPI as it grows).
 */
final class RecordingStore implements InvocationHandler {
    private final ChatStore delegate;
    private final ChatStore proxy;
    final LongAdder writes = new LongAdder();
    final LongAdder writeNanos = new LongAdder();
    final LongAdder events = new LongAdder();
    final LongAdder messages = new LongAdder();
    final LongAdder messageChars = new LongAdder();
    final AtomicLong maxBatch = new AtomicLong();
    final AtomicLong maxWriteNanos = new AtomicLong();
    final LongAdder reserves = new LongAdder();
    final LongAdder reserveNanos = new LongAdder();
    final AtomicLong maxReserveNanos = new AtomicLong();

    RecordingStore(ChatStore delegate) {
        this.delegate = delegate;
        this.proxy = (ChatStore) Proxy.newProxyInstance(ChatStore.class.getClassLoader(), new Class<?>[] {ChatStore.class}, this);
    }

    /** The store to give the engine. */
    ChatStore store() {
        return proxy;
    }

    void close() {
        delegate.close();
    }

    @Override
    public Object invoke(Object self, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        if (name.equals("write") && args != null && args.length == 1 && args[0] instanceof StoreBatch) {
            StoreBatch batch = (StoreBatch) args[0];
            long start = System.nanoTime();
            try {
                return call(method, args);
            } finally {
                long took = System.nanoTime() - start;
                writes.increment();
                writeNanos.add(took);
                maxWriteNanos.accumulateAndGet(took, Math::max);
                events.add(batch.events().size());
                messages.add(batch.messages().size());
                for (Message m : batch.messages()) {
                    if (m instanceof AssistantMessage) {
                        messageChars.add(((AssistantMessage) m).text().length());
                    }
                }
                maxBatch.accumulateAndGet(batch.events().size(), Math::max);
            }
        }
        if (name.equals("reserveSeq")) {
            long start = System.nanoTime();
            try {
                return call(method, args);
            } finally {
                long took = System.nanoTime() - start;
                reserves.increment();
                reserveNanos.add(took);
                maxReserveNanos.accumulateAndGet(took, Math::max);
            }
        }
        if (name.equals("equals") && args != null && args.length == 1) {
            return self == args[0];
        }
        if (name.equals("hashCode") && (args == null || args.length == 0)) {
            return System.identityHashCode(self);
        }
        return call(method, args);
    }

    private Object call(Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(delegate, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    String summary(double elapsedSeconds) {
        long w = writes.sum();
        double busy = writeNanos.sum() / 1e9;
        return w + " batched writes, " + Fmt.num(w == 0 ? 0 : (double) events.sum() / w) + " events each on average (max "
                + maxBatch.get() + "), " + messages.sum() + " message upserts (" + Fmt.mb(messageChars.sum()) + " of answer text), "
                + "store busy " + Fmt.num(busy) + " s = " + Fmt.pct(busy / elapsedSeconds) + " of the wall time, longest write "
                + Fmt.ms(maxWriteNanos.get() / 1e6) + "; " + reserves.sum() + " synchronous seq reservations on the event path ("
                + Fmt.ms(reserveNanos.sum() / 1e6) + " in all, longest " + Fmt.ms(maxReserveNanos.get() / 1e6) + ")";
    }
}
