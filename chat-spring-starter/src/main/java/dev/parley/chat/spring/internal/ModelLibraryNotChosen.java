package dev.parley.chat.spring.internal;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The application has model beans of both LangChain4j and Spring AI and no {@code parley.agent.library} says
 * which one the agent loop runs on. Thrown at start-up; {@link ModelLibraryFailureAnalyzer} explains what to set.
 */
public final class ModelLibraryNotChosen extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient List<ModelCandidate> candidates;

    ModelLibraryNotChosen(List<ModelCandidate> candidates) {
        super("Parley found a model in more than one library and will not pick one silently: "
                + describe(candidates) + ". Set parley.agent.library=LANGCHAIN4J or parley.agent.library=SPRING_AI, "
                + "or define a RuntimeAdapter bean.");
        this.candidates = List.copyOf(candidates);
    }

    /** The model beans found, one per library. */
    public List<ModelCandidate> candidates() {
        return candidates;
    }

    static String describe(List<ModelCandidate> candidates) {
        return candidates.stream().map(c -> c.library() + ": " + c.bean()).collect(Collectors.joining(", "));
    }
}
