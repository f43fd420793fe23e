package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.cluster.ControlMessage;
import dev.parley.chat.cluster.RunCoordinator;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link PostgresRunCoordinator} on its own, over the kinds of pool a host has. */
class PostgresRunCoordinatorTest {
    private HikariDataSource pool;
    private PostgresRunCoordinator listening;
    private PostgresRunCoordinator sending;

    @AfterEach
    void close() {
        for (AutoCloseable closeable : new AutoCloseable[] {sending, listening, pool}) {
            try {
                if (closeable != null) {
                    closeable.close();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /**
     * With auto-commit off (a common JPA setting) a {@code pg_notify} is only sent when its transaction
     * commits, and the pool rolls back what is uncommitted: the coordinator must commit its notices.
     */
    @Test
    void noticesSentOverAnAutoCommitOffPoolArrive() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(EmbeddedPostgresServer.jdbcUrl(EmbeddedPostgresServer.newSchema()));
        config.setMaximumPoolSize(4);
        config.setAutoCommit(false);
        pool = new HikariDataSource(config);

        BlockingQueue<String> received = new LinkedBlockingQueue<>();
        CountDownLatch listeningNow = new CountDownLatch(1);
        listening = PostgresRunCoordinator.builder(pool).instanceId("listening")
                .pollInterval(Duration.ofMillis(50)).build();
        listening.start(new RunCoordinator.Listener() {
            @Override
            public void onProgress(String runId, long lastSeq) {
                received.add("progress " + runId + "=" + lastSeq);
            }

            @Override
            public void onControl(ControlMessage message) {
                received.add("control " + message.kind() + " " + message.runId());
            }

            @Override
            public void onResync() {
                listeningNow.countDown();
            }
        });
        assertThat(listeningNow.await(10, TimeUnit.SECONDS)).as("the listener connected").isTrue();

        String runId = "run-" + UUID.randomUUID();
        sending = PostgresRunCoordinator.builder(pool).instanceId("sending").build();
        sending.progressed(Map.of(runId, 42L));
        sending.send(new ControlMessage(ControlMessage.Kind.CANCEL, runId, "c-1", "sending", null, null));

        assertThat(received.poll(5, TimeUnit.SECONDS)).isEqualTo("progress " + runId + "=42");
        assertThat(received.poll(5, TimeUnit.SECONDS)).isEqualTo("control CANCEL " + runId);
    }
}
