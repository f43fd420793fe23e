package dev.parley.example;

import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.runtime.Capability;
import dev.parley.simulator.BridgeSimulator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Tells the page which runtime it talks to (the one the engine runs, whatever the properties asked for), so
 * it can say when it is a simulator, and whether that runtime can call the page's own tool (Hermes' API
 * server cannot).
 */
@RestController
class ExampleInfoController {
    private final ObjectProvider<BridgeSimulator> simulator;
    private final ChatEngine engine;
    private final String openAiModel;

    ExampleInfoController(ObjectProvider<BridgeSimulator> simulator, ChatEngine engine,
            @Value("${parley.example.openai.model:llama3.2}") String openAiModel) {
        this.simulator = simulator;
        this.engine = engine;
        this.openAiModel = openAiModel;
    }

    @GetMapping("/api/example/info")
    Map<String, Object> info() {
        Map<String, Object> info = new LinkedHashMap<>();
        if (engine.runtime() instanceof AgentLoopRuntime) {
            info.put("runtime", "openai");
            info.put("description", "Parley's agent loop on " + openAiModel
                    + " at an OpenAI-compatible server (parley.example.openai.base-url).");
        } else if (simulator.getIfAvailable() != null) {
            info.put("runtime", "simulator");
            info.put("description", "The Hermes Bridge simulator: scripted scenarios, no model, no network.");
        } else {
            info.put("runtime", "hermes");
            info.put("description", "A Hermes runtime at parley.hermes.base-url.");
        }
        info.put("pageTools", engine.runtime().capabilities().contains(Capability.HOST_TOOLS));
        return info;
    }
}
