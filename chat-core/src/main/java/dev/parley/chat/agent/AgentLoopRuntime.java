package dev.parley.chat.agent;

import dev.parley.chat.ChatException;
import dev.parley.chat.agent.internal.AgentRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RunProgress;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.runtime.ToolResult;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A runtime for any model: each run is an agent loop over a {@link ModelClient} — call the model streaming,
 * relay its text, thinking and tool-call arguments as they come, let the engine answer each tool call (a
 * host action, with its approval policy, or a tool the person's browser runs), feed the results back and
 * call again, until the model answers without tools, the iteration budget is spent (the run succeeds with a
 * status line saying so), the run is cancelled (the call in flight is cancelled, the partial answer kept) or
 * the model fails (the run fails with the failure's code: {@code RATE_LIMITED}, {@code AUTHENTICATION_FAILED},
 * {@code CONTEXT_TOO_LONG}, {@code RUNTIME_UNAVAILABLE}, …). Usage is summed over the run's calls.
 *
 * <p>A model stream that ends without a finish reason (a server that died mid-answer) fails the run
 * ({@code RUNTIME_UNAVAILABLE}) with the partial answer kept; an answer cut at the model's length limit
 * ({@code length}, {@code max_tokens}) ends it SUCCEEDED with a {@code warn} status line saying it was cut off.
 * Tool calls reach the engine under execution ids unique within the run (the model's own id, or for an id the model
 * repeats that id with the model call's number, {@code call_1-2}), so a repeated id runs its tool again; the model
 * gets each result under its own id.
 *
 * <p>The model keeps no session: every run is given the conversation so far ({@code RunRequest.history}), with
 * the files and images of the person's messages where the client takes them ({@link #attachmentSupport()}).
 * The system prompt is the default one ({@link Builder#systemPrompt}) followed by the chosen skill's
 * ({@link Builder#skills}, {@link Builder#systemPrompts}), a blank line between them. Capabilities: host tools,
 * cancel, and resume: a run waiting for the person's approval of a host action when the host stops is continued
 * by the next host process from what is stored ({@link #resume}). Thread-safe.
 */
public final class AgentLoopRuntime implements RuntimeAdapter {
    /** The iteration budget when neither the run nor the builder sets one. */
    public static final int DEFAULT_MAX_ITERATIONS = 10;

    private final ModelClient client;
    private final @Nullable String systemPrompt;
    private final Function<String, @Nullable String> systemPrompts;
    private final Supplier<List<SkillOption>> skills;
    private final @Nullable List<ModelOption> models;
    private final int maxIterations;
    private final Executor executor;
    private final Map<String, AgentRun> runs = new ConcurrentHashMap<>();

    private AgentLoopRuntime(Builder b) {
        this.client = b.client;
        this.systemPrompt = b.systemPrompt;
        this.systemPrompts = b.systemPrompts;
        this.skills = b.skills;
        this.models = b.models;
        this.maxIterations = b.maxIterations;
        this.executor = b.executor != null ? b.executor : RunThreads.executor("parley-agent");
    }

    public static Builder builder(ModelClient client) {
        return new Builder(client);
    }

    @Override
    public Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
        return play(request, null);
    }

    /**
     * Continues a run a previous host process left waiting for the results of its tool calls: the loop is
     * rebuilt from the stored steps (each call shown to the model under its execution id, the answer's text
     * so far with the first call), waits for the open calls' results, and goes on; the model calls already
     * made count towards the iteration budget.
     */
    @Override
    public Flow.Publisher<AgentStreamEvent> resume(RunRequest request, RunProgress progress) {
        Objects.requireNonNull(progress, "progress");
        return play(request, progress);
    }

    private Flow.Publisher<AgentStreamEvent> play(RunRequest request, @Nullable RunProgress resumed) {
        return StreamPublisher.create(64, emitter -> {
            String system = join(systemPrompt, request.skill() == null ? null : systemPrompts.apply(request.skill()));
            int budget = request.maxIterations() != null ? request.maxIterations() : maxIterations;
            AgentRun run = new AgentRun(client, request, system, budget, emitter, resumed);
            runs.put(request.runId(), run);
            emitter.onCancel(run::cancel);
            executor.execute(() -> {
                try {
                    run.play();
                } finally {
                    runs.remove(request.runId(), run);
                }
            });
        });
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.HOST_TOOLS, Capability.CANCEL, Capability.RESUME);
    }

    /**
     * What the client puts on the wire ({@link ModelClient#attachmentSupport()}). Each run reads the bytes of
     * its question's attachments and of those in its history once, before the first model call, and sends them
     * with their messages on every call; an earlier message's attachment of a type the client cannot take, or
     * one no longer kept, is named in that message's text instead.
     */
    @Override
    public AttachmentSupport attachmentSupport() {
        return client.attachmentSupport();
    }

    @Override
    public void submitToolResult(ToolResult result) {
        AgentRun run = runs.get(result.runId());
        if (run != null) {
            run.toolResult(result);
        }
    }

    @Override
    public void cancel(String runId) {
        AgentRun run = runs.get(runId);
        if (run != null) {
            run.cancel();
        }
    }

    @Override
    public List<ModelOption> models() {
        return models != null ? models : client.models();
    }

    @Override
    public List<SkillOption> skills() {
        return skills.get();
    }

    /**
     * Always: {@link #skills()} is every skill the loop has a system prompt for, so a skill outside it (or any
     * skill, with none configured) is refused before anything is stored rather than run without its prompt.
     */
    @Override
    public boolean offersOnlyListedSkills() {
        return true;
    }

    /** The default prompt, then the skill's, a blank line between; null when neither has text. */
    private static @Nullable String join(@Nullable String base, @Nullable String skill) {
        boolean hasBase = base != null && !base.isBlank();
        boolean hasSkill = skill != null && !skill.isBlank();
        if (hasBase && hasSkill) {
            return base.strip() + "\n\n" + skill.strip();
        }
        return hasBase ? base.strip() : hasSkill ? skill.strip() : null;
    }

    /** Configures an {@link AgentLoopRuntime}. Not thread-safe. */
    public static final class Builder {
        private final ModelClient client;
        private @Nullable String systemPrompt;
        private Function<String, @Nullable String> systemPrompts = skill -> null;
        private Supplier<List<SkillOption>> skills = List::of;
        private @Nullable List<ModelOption> models;
        private int maxIterations = DEFAULT_MAX_ITERATIONS;
        private @Nullable Executor executor;

        private Builder(ModelClient client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /**
         * The system prompt of every run (default none): who the assistant is, what it may do. A chosen skill's
         * prompt follows it, after a blank line; null or blank for none.
         */
        public Builder systemPrompt(@Nullable String value) {
            this.systemPrompt = value;
            return this;
        }

        /** The skills a person may choose from, and each one's system prompt (null for none). */
        public Builder systemPrompts(List<SkillOption> offered, Function<String, @Nullable String> promptOfSkill) {
            List<SkillOption> fixed = List.copyOf(offered);
            this.skills = () -> fixed;
            this.systemPrompts = Objects.requireNonNull(promptOfSkill, "promptOfSkill");
            return this;
        }

        /**
         * The skills a person may choose from and their system prompts, asked of {@code resolver} on every run
         * and every listing (so a skills directory's edits show up without a restart). A skill the resolver
         * refuses fails the run with the resolver's error.
         */
        public Builder skills(SkillResolver resolver) {
            Objects.requireNonNull(resolver, "resolver");
            this.skills = resolver::skills;
            this.systemPrompts = resolver::systemPrompt;
            return this;
        }

        /** The models a person may choose from (default: the client's list). */
        public Builder models(List<ModelOption> value) {
            this.models = List.copyOf(value);
            return this;
        }

        /**
         * Model calls per run when the run does not say (default {@value #DEFAULT_MAX_ITERATIONS}).
         *
         * @throws ChatException CONFIGURATION if {@code value} is not positive
         */
        public Builder maxIterations(int value) {
            if (value < 1) {
                throw ChatException.configuration("maxIterations must be positive, got " + value);
            }
            this.maxIterations = value;
            return this;
        }

        /**
         * Where runs' loops run, one task per run that blocks while the model streams and while tools run
         * (default: {@link RunThreads} named {@code parley-agent-N}, virtual threads on Java 21+, daemon platform
         * threads on 17 or with {@value RunThreads#PROPERTY}{@code =false}). The runtime does not shut it down.
         */
        public Builder executor(Executor value) {
            this.executor = Objects.requireNonNull(value, "executor");
            return this;
        }

        public AgentLoopRuntime build() {
            return new AgentLoopRuntime(this);
        }
    }
}
