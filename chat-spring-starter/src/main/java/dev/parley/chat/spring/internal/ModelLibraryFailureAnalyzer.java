package dev.parley.chat.spring.internal;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains a start refused with {@link ModelLibraryNotChosen}, in Spring Boot's start-up failure report. */
public final class ModelLibraryFailureAnalyzer extends AbstractFailureAnalyzer<ModelLibraryNotChosen> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ModelLibraryNotChosen cause) {
        return new FailureAnalysis(
                "Parley runs its agent loop on the application's model when no Hermes runtime is configured, and it "
                        + "found one in each library: " + ModelLibraryNotChosen.describe(cause.candidates()) + ".",
                "Choose one:\n"
                        + "\t- parley.agent.library=LANGCHAIN4J, to run on the LangChain4j StreamingChatModel\n"
                        + "\t- parley.agent.library=SPRING_AI, to run on the Spring AI ChatModel\n"
                        + "\t- parley.hermes.base-url=<url>, to run on Hermes instead\n"
                        + "\t- define a RuntimeAdapter bean of your own",
                cause);
    }
}
