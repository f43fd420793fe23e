package dev.parley.example.copilotkit;

import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.stream.Collectors;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The Parley host the runner's Node test talks to: the starter on a SQLite file, with a scripted runtime that
 * plays by keyword. "slow" streams 60 words 40 ms apart (long enough to re-join it from another runtime),
 * "wait" streams "Partial answer" and waits to be stopped, "recall" answers with the user messages of the
 * history Parley handed it (what the runtime would know of the conversation), anything else a short answer.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class RunnerHostApplication {
    static ScriptedRuntime.Script scenario(RunRequest request) {
        String message = request.userMessage();
        if (message.contains("slow")) {
            return Scripts.slow(60, 40);
        }
        if (message.contains("wait")) {
            return Scripts.streamsUntilCancelled();
        }
        if (message.contains("recall")) {
            return (run, p) -> {
                String earlier = run.history().messages().stream()
                        .filter(UserMessage.class::isInstance).map(m -> ((UserMessage) m).text())
                        .collect(Collectors.joining(" | "));
                p.text("Earlier: " + earlier);
                p.finish();
            };
        }
        return Scripts.answer("Hello from Parley.");
    }

    @Bean
    RuntimeAdapter scriptedRuntime() {
        return ScriptedRuntime.of(RunnerHostApplication::scenario);
    }
}
