package dev.parley.example;

import dev.parley.simulator.BridgeSimulator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** Tells the page which runtime it talks to, so it can say when it is a simulator. */
@RestController
class ExampleInfoController {
    private final ObjectProvider<BridgeSimulator> simulator;

    ExampleInfoController(ObjectProvider<BridgeSimulator> simulator) {
        this.simulator = simulator;
    }

    @GetMapping("/api/example/info")
    Map<String, String> info() {
        Map<String, String> info = new LinkedHashMap<>();
        if (simulator.getIfAvailable() != null) {
            info.put("runtime", "simulator");
            info.put("description", "The Hermes Bridge simulator: scripted scenarios, no model, no network.");
        } else {
            info.put("runtime", "hermes");
            info.put("description", "A Hermes runtime at parley.hermes.base-url.");
        }
        return info;
    }
}
