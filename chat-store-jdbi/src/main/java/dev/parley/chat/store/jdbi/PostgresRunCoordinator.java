package dev.parley.chat.store.jdbi;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.ControlMessage;
import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.store.jdbi.internal.AutoCommit;
import dev.parley.chat.store.jdbi.internal.ProgressNotices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several host instances on one PostgreSQL: progress notices and control messages travel by
 * {@code LISTEN/NOTIFY}; the events themselves stay in the store's tables.
 *
 * <ul>
 *   <li>Progress ({@code parley_progress}): {@code runId=seq} entries, many runs per notice, each payload far
 *       below PostgreSQL's 8 000-byte limit. The engine sends one entry per run per flush.</li>
 *   <li>Control ({@code parley_control}): a small JSON {@link ControlMessage} — never an answer's text,
 *       which stays in the clarifies table.</li>
 * </ul>
 *
 * pgjdbc delivers notifications only to a connection that polls, so one connection per instance is taken
 * from the data source for good and polled by one thread. When it breaks it is re-opened and the engine is
 * told to resync (re-read the store), so a lost notice never becomes a lost event. Notices are sent on
 * ordinary pooled connections, each committed at once (auto-commit is switched on for it and back after,
 * whatever the pool's default: an uncommitted notice is never sent). Thread-safe.
 */
public final class PostgresRunCoordinator implements RunCoordinator {
    private static final Logger log = LoggerFactory.getLogger(PostgresRunCoordinator.class);
    static final String PROGRESS_CHANNEL = "parley_progress";
    static final String CONTROL_CHANNEL = "parley_control";

    private final DataSource dataSource;
    private final String instanceId;
    private final Duration pollInterval;
    private final Duration reconnectDelay;
    private volatile @Nullable Listener listener;
    private volatile @Nullable Thread listenerThread;
    private volatile boolean closed;

    private PostgresRunCoordinator(Builder builder) {
        this.dataSource = builder.dataSource;
        this.instanceId = builder.instanceId;
        this.pollInterval = builder.pollInterval;
        this.reconnectDelay = builder.reconnectDelay;
    }

    /** A coordinator over this PostgreSQL data source (the one the store uses). */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public String instanceId() {
        return instanceId;
    }

    @Override
    public boolean clustered() {
        return true;
    }

    @Override
    public synchronized void start(Listener value) {
        if (listenerThread != null) {
            throw new IllegalStateException("the coordinator is started already");
        }
        listener = Objects.requireNonNull(value, "listener");
        Thread thread = new Thread(this::listen, "parley-pg-listener");
        thread.setDaemon(true);
        listenerThread = thread;
        thread.start();
    }

    @Override
    public void progressed(Map<String, Long> lastSeqByRun) {
        for (String payload : ProgressNotices.payloads(lastSeqByRun)) {
            notify(PROGRESS_CHANNEL, payload);
        }
    }

    @Override
    public void send(ControlMessage message) {
        notify(CONTROL_CHANNEL, ChatJson.shared().write(message));
    }

    /** Sends a notice in a transaction of its own: PostgreSQL delivers it when that commits. */
    private void notify(String channel, String payload) {
        try (Connection connection = dataSource.getConnection()) {
            boolean switched = AutoCommit.switchOn(connection);
            try (PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
                statement.setString(1, channel);
                statement.setString(2, payload);
                statement.execute();
            } finally {
                AutoCommit.restore(connection, switched);
            }
        } catch (SQLException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "sending a " + channel + " notice failed", e);
        }
    }

    /** The listener thread: holds one connection, polls it, re-opens it when it breaks. */
    private void listen() {
        boolean first = true;
        while (!closed) {
            try (Connection connection = dataSource.getConnection()) {
                // LISTEN, too, takes effect only when its transaction commits
                boolean switched = AutoCommit.switchOn(connection);
                try (Statement statement = connection.createStatement()) {
                    statement.execute("LISTEN " + PROGRESS_CHANNEL);
                    statement.execute("LISTEN " + CONTROL_CHANNEL);
                }
                PGConnection pg = connection.unwrap(PGConnection.class);
                if (!first) {
                    log.info("Listening to other instances again; catching up from the store");
                }
                first = false;
                deliverResync();
                while (!closed) {
                    PGNotification[] notifications = pg.getNotifications((int) pollInterval.toMillis());
                    if (notifications != null) {
                        for (PGNotification notification : notifications) {
                            dispatch(notification);
                        }
                    }
                }
                // closed: give the connection back as the pool handed it out
                try (Statement statement = connection.createStatement()) {
                    statement.execute("UNLISTEN *");
                }
                AutoCommit.restore(connection, switched);
            } catch (SQLException | RuntimeException e) {
                if (!closed) {
                    log.warn("The connection listening to other instances broke; re-opening it in {} ms",
                            reconnectDelay.toMillis(), e);
                    sleep(reconnectDelay);
                }
            }
        }
    }

    private void dispatch(PGNotification notification) {
        Listener target = listener;
        if (target == null) {
            return;
        }
        try {
            if (PROGRESS_CHANNEL.equals(notification.getName())) {
                ProgressNotices.parse(notification.getParameter(), target::onProgress);
            } else if (CONTROL_CHANNEL.equals(notification.getName())) {
                target.onControl(ChatJson.shared().read(notification.getParameter(), ControlMessage.class));
            }
        } catch (RuntimeException e) {
            log.warn("Ignoring a malformed {} notice", notification.getName(), e);
        }
    }

    private void deliverResync() {
        Listener target = listener;
        if (target != null) {
            target.onResync();
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops listening and gives the listening connection back. */
    @Override
    public void close() {
        closed = true;
        Thread thread = listenerThread;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(pollInterval.toMillis() * 4);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Configures a {@link PostgresRunCoordinator}; not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private String instanceId = "instance-" + UUID.randomUUID();
        private Duration pollInterval = Duration.ofMillis(500);
        private Duration reconnectDelay = Duration.ofSeconds(1);

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** This instance's id (default: random); unique among the instances sharing the database. */
        public Builder instanceId(String value) {
            this.instanceId = Objects.requireNonNull(value, "instanceId");
            return this;
        }

        /** How long one poll of the listening connection waits for notices (default 500 ms). */
        public Builder pollInterval(Duration value) {
            this.pollInterval = Objects.requireNonNull(value, "pollInterval");
            return this;
        }

        /** How long to wait before re-opening a broken listening connection (default 1 s). */
        public Builder reconnectDelay(Duration value) {
            this.reconnectDelay = Objects.requireNonNull(value, "reconnectDelay");
            return this;
        }

        public PostgresRunCoordinator build() {
            return new PostgresRunCoordinator(this);
        }
    }
}
