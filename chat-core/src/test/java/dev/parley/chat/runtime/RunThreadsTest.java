package dev.parley.chat.runtime;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import dev.parley.chat.testing.ThreadKinds;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The switch between virtual and platform threads, on the JVM the tests run on: Java 17 in the normal run,
 * a JDK 21+ in the {@code java-25} execution (which insists on virtual threads, see {@link ThreadKinds}).
 */
class RunThreadsTest {
    private final String before = System.getProperty(RunThreads.PROPERTY);

    @AfterEach
    void restoreProperty() {
        if (before == null) {
            System.clearProperty(RunThreads.PROPERTY);
        } else {
            System.setProperty(RunThreads.PROPERTY, before);
        }
    }

    @Test
    void theFactoryNamesItsThreadsAndGivesTheKindTheJvmHas() {
        boolean virtual = ThreadKinds.expectVirtual();
        assertThat(RunThreads.virtual()).isEqualTo(virtual);
        ThreadFactory factory = RunThreads.factory("test-wait");
        Thread first = factory.newThread(() -> { });
        Thread second = factory.newThread(() -> { });
        assertThat(List.of(first.getName(), second.getName())).containsExactly("test-wait-1", "test-wait-2");
        assertThat(ThreadKinds.isVirtual(first)).isEqualTo(virtual);
        assertThat(first.isDaemon()).isTrue();
    }

    @Test
    void theExecutorRunsTasksOnNamedThreadsAndShutdownNowInterruptsAWaitingOne() throws Exception {
        boolean virtual = ThreadKinds.expectVirtual();
        ExecutorService executor = RunThreads.executor("test-exec");
        CompletableFuture<Thread> ran = new CompletableFuture<>();
        executor.execute(() -> ran.complete(Thread.currentThread()));
        Thread thread = ran.get(5, TimeUnit.SECONDS);
        assertThat(thread.getName()).isEqualTo("test-exec-1");
        assertThat(ThreadKinds.isVirtual(thread)).isEqualTo(virtual);

        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
        executor.execute(() -> {
            waiting.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.complete(true);
            }
        });
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
        executor.shutdownNow();
        assertThat(interrupted.get(5, TimeUnit.SECONDS)).isTrue();
        assertThat(executor.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void thePropertyTurnsVirtualThreadsOff() throws Exception {
        System.setProperty(RunThreads.PROPERTY, "FALSE");
        assertThat(RunThreads.virtual()).isFalse();
        assertThat(ThreadKinds.isVirtual(RunThreads.factory("test-off").newThread(() -> { }))).isFalse();
        ExecutorService executor = RunThreads.executor("test-off");
        try {
            CompletableFuture<Thread> ran = new CompletableFuture<>();
            executor.execute(() -> ran.complete(Thread.currentThread()));
            Thread thread = ran.get(5, TimeUnit.SECONDS);
            assertThat(ThreadKinds.isVirtual(thread)).isFalse();
            assertThat(thread.isDaemon()).isTrue();
        } finally {
            executor.shutdown();
        }
    }

    @Test
    void thePlatformFactoryGivesNamedPlatformDaemonThreadsOnEveryJvm() {
        Thread thread = RunThreads.platformFactory("test-fixed").newThread(() -> { });
        assertThat(thread.getName()).isEqualTo("test-fixed-1");
        assertThat(ThreadKinds.isVirtual(thread)).isFalse();
        assertThat(thread.isDaemon()).isTrue();
    }

    @Test
    void aMisspelledPropertyOrABlankPrefixIsRefusedClearly() {
        System.setProperty(RunThreads.PROPERTY, "no");
        assertThatThrownBy(() -> RunThreads.executor("test")).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION))
                .hasMessage("the system property parley.virtualThreads must be true or false, not 'no'");
        System.clearProperty(RunThreads.PROPERTY);
        assertThatThrownBy(() -> RunThreads.factory(" ")).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION)).hasMessageContaining("blank");
    }

    /** The engine's run work and the agent loop run on run threads. */
    @Test
    void anAgentLoopRunsOnAgentThreadsAndItsHostActionOnWorkThreads() {
        boolean virtual = ThreadKinds.expectVirtual();
        AtomicReference<Thread> loop = new AtomicReference<>();
        AtomicReference<Thread> action = new AtomicReference<>();
        AtomicInteger calls = new AtomicInteger();
        ScriptedModel model = ScriptedModel.choosing(request -> {
            loop.compareAndSet(null, Thread.currentThread());
            return calls.getAndIncrement() == 0 ? reply().toolCall(0, "c1", "whoami", "{}") : reply().text("Done.");
        });
        HostAction whoami = new HostAction(new HostToolSpec("whoami", "Says who runs", "{}"), call -> {
            action.set(Thread.currentThread());
            return "ok";
        });
        try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore())
                .runtime(AgentLoopRuntime.builder(model).build()).hostAction(whoami).build()) {
            String thread = engine.createThread("alice", NewThread.empty()).id();
            RunTicket ticket = engine.startRun("alice", thread, StartRun.of("who runs this?"));
            Await.until(() -> engine.state("alice", ticket.runId()).run().status(), s -> s == RunStatus.SUCCEEDED,
                    "the run to succeed");
            assertThat(loop.get().getName()).startsWith("parley-agent-");
            assertThat(ThreadKinds.isVirtual(loop.get())).isEqualTo(virtual);
            assertThat(action.get().getName()).startsWith("parley-work-");
            assertThat(ThreadKinds.isVirtual(action.get())).isEqualTo(virtual);
        }
    }
}
