package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.hermes.HermesRuntimeAdapter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Hermes Agent's own API server ({@code hermes gateway run}), through the adapter's API_SERVER transport. */
class RealHermesApiServerTest extends RealHermesChecks {
    private static RealHermes hermes;
    private static HermesRuntimeAdapter adapter;

    @BeforeAll
    static void connect(RealHermes shared) {
        hermes = shared;
        adapter = shared.apiServerAdapter();
    }

    @AfterAll
    static void disconnect() throws Exception {
        if (adapter != null) {
            adapter.close();
        }
        String log = System.getProperty("org.slf4j.simpleLogger.logFile");
        if (hermes != null && log != null && Files.exists(Path.of(log))) {
            assertThat(Files.readString(Path.of(log))).as("the adapter's log").doesNotContain(hermes.apiServerKey());
        }
    }

    @Override
    RealHermes hermes() {
        return hermes;
    }

    @Override
    HermesRuntimeAdapter adapter() {
        return adapter;
    }
}
