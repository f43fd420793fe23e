package dev.parley.chat.store.jdbi.internal;

import java.util.concurrent.Callable;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.config.ConfigRegistry;
import org.jdbi.v3.core.extension.ExtensionContext;
import org.jdbi.v3.core.extension.Extensions;
import org.jdbi.v3.core.extension.HandleSupplier;

/**
 * The store's DAOs over one {@link Jdbi}, each of its database's interface ({@link RunDao#of} and the
 * like: chosen here, once), attached once when the store starts and then used by every read or write. A
 * DAO method runs on the handle of the read or write in progress on the calling thread (see
 * {@link StoreDatabase#read}); outside one it fails.
 *
 * <p>Why not {@code handle.attach(…)} per call: Jdbi builds a configuration per method of the interface at
 * every attach, a microsecond or more each — more than the statement itself on SQLite for a small read, and
 * a hundred microseconds of every batch. Attached once, a call costs what the fluent API costs, plus a
 * little. Thread-safe.
 */
public final class Daos {
    private final ThreadDao threads;
    private final MessageDao messages;
    private final MessageTreeDao tree;
    private final SearchDao search;
    private final RunDao runs;
    private final EventDao events;
    private final InputDao inputs;
    private final FeedbackDao feedback;
    private final HostActionDao hostActions;
    private final AttachmentDao attachments;
    private final BlobDao blobs;
    private final SchemaDao schema;
    private final OutboxDao outbox;

    Daos(Jdbi jdbi, Dialect dialect) {
        CurrentHandle current = new CurrentHandle(jdbi);
        this.threads = current.attach(ThreadDao.of(dialect));
        this.messages = current.attach(MessageDao.of(dialect));
        this.tree = current.attach(MessageTreeDao.class);
        this.search = current.attach(SearchDao.of(dialect));
        this.runs = current.attach(RunDao.of(dialect));
        this.events = current.attach(EventDao.of(dialect));
        this.inputs = current.attach(InputDao.class);
        this.feedback = current.attach(FeedbackDao.class);
        this.hostActions = current.attach(HostActionDao.class);
        this.attachments = current.attach(AttachmentDao.of(dialect));
        this.blobs = current.attach(BlobDao.class);
        this.schema = current.attach(SchemaDao.of(dialect));
        this.outbox = current.attach(OutboxDao.class);
    }

    public ThreadDao threads() {
        return threads;
    }

    public MessageDao messages() {
        return messages;
    }

    public MessageTreeDao tree() {
        return tree;
    }

    public SearchDao search() {
        return search;
    }

    public RunDao runs() {
        return runs;
    }

    public EventDao events() {
        return events;
    }

    public InputDao inputs() {
        return inputs;
    }

    public FeedbackDao feedback() {
        return feedback;
    }

    public HostActionDao hostActions() {
        return hostActions;
    }

    public AttachmentDao attachments() {
        return attachments;
    }

    public BlobDao blobs() {
        return blobs;
    }

    public SchemaDao schema() {
        return schema;
    }

    public OutboxDao outbox() {
        return outbox;
    }

    /** Work on the DAOs, in one read or one write transaction. */
    @FunctionalInterface
    public interface Work<T> {
        T on(Daos dao);
    }

    /**
     * The handle of the Jdbi callback running on this thread: Jdbi keeps it in the Jdbi's handle scope for
     * the callback's length, and the extension context of each DAO call goes onto that handle.
     */
    private static final class CurrentHandle implements HandleSupplier {
        private final Jdbi jdbi;

        CurrentHandle(Jdbi jdbi) {
            this.jdbi = jdbi;
        }

        <T> T attach(Class<T> type) {
            return jdbi.getConfig(Extensions.class).findFor(type, this)
                    .orElseThrow(() -> new IllegalStateException("no Jdbi extension for " + type.getName()));
        }

        private HandleSupplier current() {
            HandleSupplier current = jdbi.getHandleScope().get();
            if (current == null) {
                throw new IllegalStateException("a DAO was called outside the store's reads and writes");
            }
            return current;
        }

        @Override
        public Handle getHandle() {
            return current().getHandle();
        }

        @Override
        public Jdbi getJdbi() {
            return jdbi;
        }

        /** The configuration the DAOs are built with (at attach): the Jdbi's, as every handle's starts. */
        @Override
        public ConfigRegistry getConfig() {
            return jdbi.getConfig();
        }

        @Override
        public <V> V invokeInContext(ExtensionContext extensionContext, Callable<V> task) throws Exception {
            return current().invokeInContext(extensionContext, task);
        }
    }
}
