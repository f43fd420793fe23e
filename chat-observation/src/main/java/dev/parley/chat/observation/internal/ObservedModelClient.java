package dev.parley.chat.observation.internal;

import static dev.parley.chat.observation.ParleyObservations.*;

import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.agent.ModelResponse;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.ModelOption;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ModelClient} whose every call is a {@code parley.model.call} observation, a child of the observation
 * current on the calling thread (the run's, in the agent loop). The call's scope is open while the delegate
 * starts the call, so a model library's own observation made then nests under it.
 */
public final class ObservedModelClient implements ModelClient {
    private final ModelClient delegate;
    private final ObservationRegistry registry;
    private final String provider;

    public ObservedModelClient(ModelClient delegate, ObservationRegistry registry, String provider) {
        this.delegate = delegate;
        this.registry = registry;
        this.provider = provider;
    }

    @Override
    public ModelCall stream(ModelRequest request, ModelListener listener) {
        String model = request.modelId() != null ? request.modelId() : UNKNOWN;
        Observation observation = Observation.createNotStarted(MODEL_CALL, registry)
                .contextualName("chat " + model)
                .lowCardinalityKeyValue(OPERATION, "chat")
                .lowCardinalityKeyValue(PROVIDER, provider)
                .lowCardinalityKeyValue(REQUEST_MODEL, model)
                .start();
        Ending ending = new Ending(observation);
        ModelCall call;
        try (Observation.Scope scope = observation.openScope()) {
            call = delegate.stream(request, new Observing(listener, ending));
        } catch (RuntimeException | Error e) {
            ending.failed(e);
            throw e;
        }
        return () -> {
            call.cancel();
            ending.end("cancelled");
        };
    }

    @Override
    public List<ModelOption> models() {
        return delegate.models();
    }

    @Override
    public AttachmentSupport attachmentSupport() {
        return delegate.attachmentSupport();
    }

    /** Stops the observation once, whichever of completion, failure and cancel comes first. */
    private static final class Ending {
        private final Observation observation;
        private final AtomicBoolean ended = new AtomicBoolean();

        Ending(Observation observation) {
            this.observation = observation;
        }

        void completed(ModelResponse response) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            if (response.usage() != null) {
                observation.highCardinalityKeyValue(INPUT_TOKENS, Long.toString(response.usage().inputTokens()))
                        .highCardinalityKeyValue(OUTPUT_TOKENS, Long.toString(response.usage().outputTokens()));
            }
            if (response.finishReason() != null) {
                observation.highCardinalityKeyValue(FINISH_REASONS, response.finishReason());
            }
            observation.lowCardinalityKeyValue(OUTCOME, "success").stop();
        }

        void failed(Throwable error) {
            if (ended.compareAndSet(false, true)) {
                observation.lowCardinalityKeyValue(OUTCOME, "error")
                        .lowCardinalityKeyValue(ERROR_TYPE, error.getClass().getName());
                observation.error(error);
                observation.stop();
            }
        }

        void end(String outcome) {
            if (ended.compareAndSet(false, true)) {
                observation.lowCardinalityKeyValue(OUTCOME, outcome).stop();
            }
        }
    }

    private static final class Observing implements ModelListener {
        private final ModelListener delegate;
        private final Ending ending;

        Observing(ModelListener delegate, Ending ending) {
            this.delegate = delegate;
            this.ending = ending;
        }

        @Override
        public void onText(String delta) {
            delegate.onText(delta);
        }

        @Override
        public void onThinking(String delta) {
            delegate.onThinking(delta);
        }

        @Override
        public void onToolCallDelta(int index, @Nullable String id, @Nullable String name, String argumentsDelta) {
            delegate.onToolCallDelta(index, id, name, argumentsDelta);
        }

        @Override
        public void onComplete(ModelResponse response) {
            ending.completed(response);
            delegate.onComplete(response);
        }

        @Override
        public void onError(Throwable error) {
            ending.failed(error);
            delegate.onError(error);
        }
    }
}
