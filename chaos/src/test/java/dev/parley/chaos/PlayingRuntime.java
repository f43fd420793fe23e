package dev.parley.chaos;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.StreamPublisher;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;

/**
 * A runtime that plays a script per run on a thread of its own, for tests whose faults are elsewhere
 * (between the browser and the host, in the database, or in sheer numbers). It declares no optional
 * capability.
 */
final class PlayingRuntime implements RuntimeAdapter, AutoCloseable {
    /** One run's script: emits its events and returns; a false from {@code emit} means the run was let go. */
    @FunctionalInterface
    interface Script {
        void play(RunRequest request, StreamPublisher.Emitter<AgentStreamEvent> out) throws Exception;
    }

    private final Script script;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "playing-runtime");
        thread.setDaemon(true);
        return thread;
    });

    PlayingRuntime(Script script) {
        this.script = script;
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
        return StreamPublisher.create(out -> threads.execute(() -> {
            try {
                script.play(request, out);
                out.complete();
            } catch (Exception e) {
                out.fail(e);
            }
        }));
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}
