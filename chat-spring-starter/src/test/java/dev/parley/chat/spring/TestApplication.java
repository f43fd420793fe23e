package dev.parley.chat.spring;

import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.List;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** A host application for the starter's HTTP tests: a scripted runtime that plays by keyword. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class TestApplication {

    /** The scenario a message asks for. */
    static ScriptedRuntime.Script scenario(String message) {
        if (message.contains("clarify")) {
            return Scripts.clarify("Which city?", List.of("Paris", "Rome"));
        }
        if (message.contains("slow")) {
            return Scripts.slow(40, 25);
        }
        if (message.contains("wait")) {
            return Scripts.streamsUntilCancelled();
        }
        if (message.contains("tools")) {
            return Scripts.toolsAndTodos();
        }
        if (message.contains("flood")) {
            return flood(2_000, 2_048);
        }
        if (message.contains("fail")) {
            return Scripts.failsWith("RUNTIME_FAILED", "the model provider answered 500");
        }
        return Scripts.answer("Hello from the scripted runtime.");
    }

    /** Streams {@code deltas} text deltas of {@code size} characters each as fast as it can, then succeeds. */
    static ScriptedRuntime.Script flood(int deltas, int size) {
        return (request, p) -> {
            String chunk = "x".repeat(size - 1) + " ";
            for (int i = 0; i < deltas; i++) {
                p.text(chunk);
            }
            p.finish();
        };
    }

    @Bean
    RuntimeAdapter scriptedRuntime() {
        return ScriptedRuntime.of(request -> scenario(request.userMessage()));
    }
}
