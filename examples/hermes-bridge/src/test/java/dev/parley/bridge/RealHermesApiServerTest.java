package dev.parley.bridge;

import dev.parley.chat.hermes.HermesRuntimeAdapter;
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
    static void disconnect() {
        if (adapter != null) {
            adapter.close();
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
