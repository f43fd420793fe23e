package dev.parley.chat.testing.openai;

import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** Records what a model call signalled, in order, as short strings ({@code text:Hel}, {@code error:…}). */
public final class RecordingListener implements ModelListener {
    public final List<String> signals = new CopyOnWriteArrayList<>();
    public final CompletableFuture<ModelResponse> completed = new CompletableFuture<>();
    public final CompletableFuture<Throwable> failed = new CompletableFuture<>();

    @Override
    public void onText(String delta) {
        signals.add("text:" + delta);
    }

    @Override
    public void onThinking(String delta) {
        signals.add("thinking:" + delta);
    }

    @Override
    public void onToolCallDelta(int index, @Nullable String id, @Nullable String name, String argumentsDelta) {
        signals.add("tool:" + index + ":" + id + ":" + name + ":" + argumentsDelta);
    }

    @Override
    public void onComplete(ModelResponse response) {
        signals.add("complete");
        completed.complete(response);
    }

    @Override
    public void onError(Throwable error) {
        signals.add("error");
        failed.complete(error);
    }

    public ModelResponse response() throws Exception {
        try {
            return completed.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no response; signals: " + signals + (failed.isDone() ? ", error: "
                    + failed.get() : ""), e);
        }
    }

    public Throwable error() throws InterruptedException, ExecutionException {
        try {
            return failed.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("no error; signals: " + signals, e);
        }
    }
}
