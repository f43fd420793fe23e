package dev.parley.bench;

import java.util.Map;

/** Runs the chosen sections in order and adds the rows that compare sections. */
final class Sections {
    private final Env env;

    Sections(Env env) {
        this.env = env;
    }

    void runAll() throws Exception {
        Options o = env.options;
        RelayBench relay = null;
        PersistenceBench persist = null;
        LatencyBench latency = null;
        if (o.runs("relay")) {
            relay = new RelayBench(env);
            relay.run();
        }
        if (o.runs("persist")) {
            persist = new PersistenceBench(env);
            persist.run();
        }
        if (relay != null && persist != null) {
            compare(relay.results(), persist.results());
        }
        if (o.runs("latency")) {
            latency = new LatencyBench(env);
            latency.run();
        }
        if (o.runs("streams")) {
            new OpenStreamsBench(env).run();
        }
        if (o.runs("waiting")) {
            new WaitingRunsBench(env).run();
        }
        if (o.runs("naive")) {
            new NaiveBench(env, latency == null || latency.results().get("sqlite") == null ? null
                    : latency.results().get("sqlite")).run();
        }
        if (o.runs("history")) {
            new HistoryBench(env).run();
        }
        if (o.runs("search")) {
            new SearchBench(env).run();
        }
        if (o.runs("models")) {
            new ModelRelayBench(env).run();
        }
    }

    /** Section 2's rule: (c) and (d) must not fall below the lower of the adapter path (b) and the store's figure. */
    private void compare(Map<String, Stats> relay, Map<String, Stats> persist) {
        if (!relay.keySet().containsAll(java.util.List.of("b", "c", "d"))) {
            return;
        }
        double b = relay.get("b").median();
        check("2c", "relay (c) SQLite vs min((b), 2a store)", relay.get("c"), b, persist.get("sqlite-store"));
        check("2d", "relay (d) PostgreSQL vs min((b), 2b store)", relay.get("d"), b, persist.get("pg-store"));
    }

    private void check(String id, String what, Stats relay, double adapterPath, Stats store) {
        double bound = Math.min(adapterPath, store.median());
        double ratio = relay.median() / bound;
        double spread = Math.max(relay.spreadPercent(), store.spreadPercent()) / 100;
        env.report.row(id, what, Fmt.num(relay.median()) + " ev/s", "≥ " + Fmt.num(bound) + " ev/s ("
                + (store.median() < adapterPath ? "store" : "(b)") + ")", String.format(java.util.Locale.ROOT, "%.3f", ratio),
                ratio >= 1.0 ? Report.Verdict.MET : ratio >= 1.0 - spread ? Report.Verdict.NEAR : Report.Verdict.MISSED);
    }
}
