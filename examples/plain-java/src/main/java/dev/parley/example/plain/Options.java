package dev.parley.example.plain;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The command line: {@code --key value} (or {@code --key=value}); the model's address, name and key may also
 * come from the environment.
 *
 * @param approve null to ask at the console, else the answer to every approval
 */
record Options(String baseUrl, String model, String apiKey, Path database, Boolean approve, String message,
        String followUp, boolean help) {

    static final String USAGE = String.join("\n",
            "Usage: java -jar parley-plain-java.jar [options]",
            "  --base-url URL     an OpenAI-compatible server (env OPENAI_BASE_URL;",
            "                     default http://localhost:11434/v1, a local Ollama)",
            "  --model NAME       the model (env OPENAI_MODEL; default llama3.2)",
            "  --api-key KEY      its API key (env OPENAI_API_KEY; local servers take any)",
            "  --db FILE          the SQLite file (default parley-example.db)",
            "  --approve yes|no   answer approvals without asking (default: ask at the console)",
            "  --message TEXT     the first message",
            "  --follow-up TEXT   the message sent after the restart",
            "  --help             this text");

    private static final Set<String> KEYS =
            Set.of("base-url", "model", "api-key", "db", "approve", "message", "follow-up");

    /**
     * The options in {@code args}, else in {@code env}, else the defaults.
     *
     * @throws IllegalArgumentException for an unknown option, one without its value, or a value it cannot take
     */
    static Options parse(String[] args, Map<String, String> env) {
        Map<String, String> given = new HashMap<>();
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--help") || arg.equals("-h")) {
                help = true;
                continue;
            }
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("Unexpected argument: " + arg);
            }
            int equals = arg.indexOf('=');
            String key = equals < 0 ? arg.substring(2) : arg.substring(2, equals);
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException("Unknown option: --" + key);
            }
            if (equals < 0 && i + 1 >= args.length) {
                throw new IllegalArgumentException("--" + key + " needs a value");
            }
            given.put(key, equals < 0 ? args[++i] : arg.substring(equals + 1));
        }
        String approve = given.get("approve");
        if (approve != null && !approve.equals("yes") && !approve.equals("no")) {
            throw new IllegalArgumentException("--approve takes yes or no, not " + approve);
        }
        for (String text : new String[] {"message", "follow-up"}) {
            if (given.containsKey(text) && given.get(text).isBlank()) {
                throw new IllegalArgumentException("--" + text + " must not be blank");
            }
        }
        return new Options(
                given.getOrDefault("base-url", env.getOrDefault("OPENAI_BASE_URL", "http://localhost:11434/v1")),
                given.getOrDefault("model", env.getOrDefault("OPENAI_MODEL", "llama3.2")),
                given.getOrDefault("api-key", env.getOrDefault("OPENAI_API_KEY", "unused")),
                Path.of(given.getOrDefault("db", "parley-example.db")),
                approve == null ? null : approve.equals("yes"),
                given.getOrDefault("message", "Order 42 arrived broken. Please refund it."),
                given.getOrDefault("follow-up", "Thanks! What exactly did you do for me?"),
                help);
    }
}
