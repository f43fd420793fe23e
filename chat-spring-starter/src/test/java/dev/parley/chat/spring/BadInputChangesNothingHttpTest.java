package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Every mutating endpoint of the starter refuses bad input with a {@code 4xx} problem and changes nothing:
 * each case is sent over loopback to a host on a real SQLite file (the JDBI store), and every table of
 * that file, every row, is the same after the refusal as before it. The endpoints are read from Spring's
 * request mappings, so a new POST, PUT, PATCH or DELETE endpoint without bad-input cases here fails the test.
 * Every endpoint also refuses what a page on another site makes a browser send (its {@code Origin} neither
 * the server's own nor {@code parley.web.allowed-origins}), with a body or without.
 * The runtime offers one model and one skill and takes no others. The CopilotKit endpoint answers its
 * refusals in CopilotKit's JSON shape ({@code {error, …, code}}) rather than as problems.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "parley.owner.mode=HEADER",
    "test.runtime.offering=true",
    "parley.web.allowed-origins=https://app.example.com",
    "parley.web.copilotkit.trust-owner-header=true",
    "spring.datasource.url=jdbc:sqlite:target/bad-input-${random.uuid}.db"
})
class BadInputChangesNothingHttpTest {
    private static final String ALICE = "alice";
    private static final String BOB = "bob";
    private static final String BASE = "/api/chat";
    private static final Set<RequestMethod> MUTATING =
            Set.of(RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE);
    private static final String NO_SUCH_ID = "00000000-0000-0000-0000-000000000000";
    private static final String OTHER_SITE = "https://evil.example";
    private static final String ALLOWED_SITE = "https://app.example.com";

    /** A bad request to an endpoint ({@code pattern} as mapped) and the status it must get. */
    record BadRequest(String method, String pattern, String path, String owner, String contentType, String body,
            String origin, int status) {
        String endpoint() {
            return method + " " + pattern;
        }

        @Override
        public String toString() {
            return method + " " + path + " as " + owner + " (" + contentType + ") " + abbreviated(body)
                    + (origin == null ? "" : " from " + origin);
        }

        private static String abbreviated(String body) {
            return body == null ? "no body" : body.length() > 80 ? body.substring(0, 80) + "…" : body;
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    DataSource dataSource;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    @Test
    void everyMutatingEndpointRefusesBadInputAndChangesNothing() throws Exception {
        HttpSupport http = new HttpSupport(port);
        World world = World.make(http);
        List<BadRequest> cases = cases(world);

        Set<String> uncovered = new TreeSet<>(mutatingEndpoints());
        cases.forEach(c -> uncovered.remove(c.endpoint()));
        assertThat(uncovered).as("mutating endpoints without bad-input cases in this test").isEmpty();
        Set<String> stale = new TreeSet<>();
        cases.forEach(c -> stale.add(c.endpoint()));
        stale.removeAll(mutatingEndpoints());
        assertThat(stale).as("cases for endpoints that are not mapped").isEmpty();

        Map<String, List<String>> before = settledDump();
        assertThat(before).containsKeys("parley_threads", "parley_messages", "parley_runs", "parley_run_events",
                "parley_inputs", "parley_feedback");
        assertThat(before.get("parley_threads")).hasSize(3);
        assertThat(before.get("parley_runs")).hasSize(3);
        assertThat(before.get("parley_inputs")).as("the pending clarify").isNotEmpty();
        for (BadRequest bad : cases) {
            HttpSupport.Reply reply = http.send(bad.owner(), bad.method(), bad.path(), bad.contentType(), bad.body(),
                    bad.origin());
            assertThat(reply.status()).as("%s: %s", bad, reply.body()).isEqualTo(bad.status());
            boolean copilotKit = bad.pattern().startsWith(BASE + "/copilotkit");
            assertThat(reply.contentType()).as("%s", bad)
                    .startsWith(copilotKit ? "application/json" : "application/problem+json");
            assertThat(reply.json().path(copilotKit ? "error" : "title").asText()).as("%s", bad).isNotEmpty();
            assertThat(reply.json().path("code").asText()).as("%s", bad).isNotEmpty();
            assertThat(dump()).as("the tables after %s", bad).isEqualTo(before);
        }
        Thread.sleep(300);
        assertThat(dump()).as("the tables once the engine had time to write anything late").isEqualTo(before);

        HttpSupport.Reply renamed = http.send(ALICE, "PATCH", BASE + "/sessions/" + world.session, "application/json",
                "{\"title\":\"renamed\"}", http.origin());
        assertThat(renamed.status()).as("from the server's own origin: %s", renamed.body()).isEqualTo(200);
        assertThat(dump()).as("a good request does change the tables (the dump sees changes)").isNotEqualTo(before);
        HttpSupport.Reply allowed = http.send(ALICE, "PATCH", BASE + "/sessions/" + world.session, "application/json",
                "{\"title\":\"renamed again\"}", ALLOWED_SITE);
        assertThat(allowed.status()).as("from an allowed origin: %s", allowed.body()).isEqualTo(200);
        assertThat(http.post(ALICE, BASE + "/runs/" + world.waitingRun() + "/cancel", null).status()).isEqualTo(202);
        http.awaitState(ALICE, world.waitingRun(), "CANCELLED");
    }

    /** The sessions, runs, messages and pending input the bad requests aim at. */
    record World(String session, String userMessage, String answer, String run, String waitingSession,
            String waitingRun, String input, String bobSession, String bobAnswer, String bobRun) {

        static World make(HttpSupport http) throws InterruptedException {
            String session = http.post(ALICE, BASE + "/sessions",
                    "{\"title\":\"kept\",\"modelId\":\"small\",\"skill\":\"support\"}").json().get("id").asText();
            String run = http.startRun(ALICE, session, "hello").get("runId").asText();
            http.awaitState(ALICE, run, "SUCCEEDED");
            String bobSession = http.newSession(BOB);
            String bobRun = http.startRun(BOB, bobSession, "hello").get("runId").asText();
            http.awaitState(BOB, bobRun, "SUCCEEDED");
            String waitingSession = http.newSession(ALICE);
            String waitingRun = http.startRun(ALICE, waitingSession, "clarify please").get("runId").asText();
            String input = awaitInput(http, waitingRun);
            JsonNode items = http.get(ALICE, BASE + "/sessions/" + session).json().get("messages");
            return new World(session, idOf(items, "user"), idOf(items, "assistant"), run, waitingSession, waitingRun,
                    input, bobSession, idOf(http.get(BOB, BASE + "/sessions/" + bobSession).json().get("messages"),
                            "assistant"), bobRun);
        }

        private static String awaitInput(HttpSupport http, String runId) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                JsonNode inputs = http.get(ALICE, BASE + "/runs/" + runId + "/state").json().path("pendingInputs");
                if (inputs.size() > 0) {
                    return inputs.get(0).get("inputId").asText();
                }
                assertThat(System.nanoTime()).as("the clarify to be pending").isLessThan(deadline);
                Thread.sleep(10);
            }
        }

        private static String idOf(JsonNode messages, String role) {
            for (JsonNode message : messages) {
                if (message.path("type").asText().equals(role)) {
                    return message.get("id").asText();
                }
            }
            throw new AssertionError("no " + role + " message in " + messages);
        }
    }

    /** The bad requests: per endpoint, its own bad inputs, plus a body that is not JSON and no caller. */
    private static List<BadRequest> cases(World w) {
        List<BadRequest> cases = new ArrayList<>();
        String json = "application/json";
        Endpoint sessions = new Endpoint(cases, "POST", "/sessions", BASE + "/sessions");
        sessions.bad(ALICE, json, "{\"title\":42}", 400);
        sessions.bad(ALICE, json, "{\"modelId\":\"nope\"}", 400);
        sessions.bad(ALICE, json, "{\"skill\":\"../../etc/passwd\"}", 400);
        sessions.bad(ALICE, json, "[1,2]", 400);
        sessions.bad(ALICE, json, "{\"title\":", 400);
        sessions.common();

        Endpoint update = new Endpoint(cases, "PATCH", "/sessions/{id}", BASE + "/sessions/" + w.session());
        update.bad(ALICE, json, "{\"title\":null}", 400);
        update.bad(ALICE, json, "{\"title\":7}", 400);
        update.bad(ALICE, json, "{\"archived\":\"yes\"}", 400);
        update.bad(ALICE, json, "{\"modelId\":\"nope\"}", 400);
        update.bad(ALICE, json, "{\"skill\":\"../../etc/passwd\"}", 400);
        update.bad(ALICE, json, "{\"title\":\"fine\",\"archived\":1}", 400);
        update.at(BASE + "/sessions/" + w.bobSession()).bad(ALICE, json, "{\"title\":\"mine now\"}", 404);
        update.at(BASE + "/sessions/" + NO_SUCH_ID).bad(ALICE, json, "{\"title\":\"x\"}", 404);
        update.common();

        Endpoint delete = new Endpoint(cases, "DELETE", "/sessions/{id}", BASE + "/sessions/" + w.session());
        delete.at(BASE + "/sessions/" + w.bobSession()).bad(ALICE, null, null, 404);
        delete.at(BASE + "/sessions/" + NO_SUCH_ID).bad(ALICE, null, null, 404);
        delete.at(BASE + "/sessions/" + w.waitingSession()).bad(ALICE, null, null, 409);
        delete.bad(ALICE, "application/x-www-form-urlencoded", "really=yes", 415);
        delete.bad(null, null, null, 401);
        delete.crossSite();

        Endpoint start = new Endpoint(cases, "POST", "/sessions/{id}/runs", BASE + "/sessions/" + w.session() + "/runs");
        start.bad(ALICE, json, "{\"message\":\"hi\",\"skill\":\"../../etc/passwd\"}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"modelId\":\"nope\"}", 400);
        start.bad(ALICE, json, "{}", 400);
        start.bad(ALICE, json, "{\"message\":\"   \"}", 400);
        start.bad(ALICE, json, "{\"message\":42}", 400);
        start.bad(ALICE, json, "{\"message\":\"" + "x".repeat(100_001) + "\"}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"maxIterations\":0}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"maxIterations\":\"3\"}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"context\":\"x\"}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"clientTools\":\"x\"}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"clientTools\":[{\"name\":\"refund_order\"}]}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\"", 400);
        start.bad(ALICE, "multipart/form-data; boundary=x", "--x--", 415);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"attachments\":\"x\"}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"attachments\":[42]}", 400);
        start.bad(ALICE, json, "{\"message\":\"hi\",\"attachments\":[\"" + NO_SUCH_ID + "\"]}", 404);
        start.at(BASE + "/sessions/" + w.bobSession() + "/runs").bad(ALICE, json, "{\"message\":\"hi\"}", 404);
        start.at(BASE + "/sessions/" + NO_SUCH_ID + "/runs").bad(ALICE, json, "{\"message\":\"hi\"}", 404);
        start.common();

        Endpoint upload = new Endpoint(cases, "POST", "/sessions/{id}/attachments",
                BASE + "/sessions/" + w.session() + "/attachments?name=a.png");
        upload.bad(ALICE, "image/png", "%PDF-1.4\nnot an image", 400);
        upload.bad(ALICE, "text/plain", "<!DOCTYPE html><script>alert(1)</script>", 400);
        upload.bad(ALICE, "application/json", "{\"message\":\"hi\"}", 400);
        upload.bad(ALICE, "text/plain", "", 400);
        upload.bad(ALICE, "multipart/form-data; boundary=x", "--x--", 400);
        upload.at(BASE + "/sessions/" + w.bobSession() + "/attachments").bad(ALICE, "text/plain", "notes", 404);
        upload.at(BASE + "/sessions/" + NO_SUCH_ID + "/attachments").bad(ALICE, "text/plain", "notes", 404);
        upload.bad(null, "text/plain", "notes", 401);
        upload.crossSite();

        Endpoint cancel = new Endpoint(cases, "POST", "/runs/{runId}/cancel", BASE + "/runs/" + w.waitingRun() + "/cancel");
        cancel.at(BASE + "/runs/" + w.bobRun() + "/cancel").bad(ALICE, null, null, 404);
        cancel.at(BASE + "/runs/" + NO_SUCH_ID + "/cancel").bad(ALICE, null, null, 404);
        cancel.common();

        Endpoint regenerate = new Endpoint(cases, "POST", "/messages/{id}/regenerate",
                BASE + "/messages/" + w.answer() + "/regenerate");
        regenerate.at(BASE + "/messages/" + w.userMessage() + "/regenerate").bad(ALICE, null, null, 400);
        regenerate.at(BASE + "/messages/" + w.bobAnswer() + "/regenerate").bad(ALICE, null, null, 404);
        regenerate.at(BASE + "/messages/" + NO_SUCH_ID + "/regenerate").bad(ALICE, null, null, 404);
        regenerate.bad(ALICE, json, "{\"clientTools\":\"x\"}", 400);
        regenerate.bad(ALICE, json, "[]", 400);
        regenerate.common();

        Endpoint feedback = new Endpoint(cases, "POST", "/messages/{id}/feedback",
                BASE + "/messages/" + w.answer() + "/feedback");
        feedback.bad(ALICE, json, "{\"rating\":\"sideways\"}", 400);
        feedback.bad(ALICE, json, "{}", 400);
        feedback.bad(ALICE, json, "{\"rating\":\"up\",\"comment\":5}", 400);
        feedback.at(BASE + "/messages/" + w.bobAnswer() + "/feedback").bad(ALICE, json, "{\"rating\":\"up\"}", 404);
        feedback.common();

        Endpoint answer = new Endpoint(cases, "POST", "/runs/{runId}/inputs/{inputId}",
                BASE + "/runs/" + w.waitingRun() + "/inputs/" + w.input());
        answer.bad(ALICE, json, "{}", 400);
        answer.bad(ALICE, json, "{\"kind\":\"nonsense\"}", 400);
        answer.bad(ALICE, json, "{\"answer\":42}", 400);
        answer.at(BASE + "/runs/" + w.waitingRun() + "/inputs/" + NO_SUCH_ID).bad(ALICE, json, "{\"answer\":\"Paris\"}", 404);
        answer.bad(BOB, json, "{\"answer\":\"Paris\"}", 404);
        answer.common();

        Endpoint resume = new Endpoint(cases, "POST", "/runs/{runId}/resume", BASE + "/runs/" + w.waitingRun() + "/resume");
        resume.bad(ALICE, json, "{\"answer\":\"Paris\"}", 400);
        resume.bad(ALICE, json, "{\"clarifyId\":\"" + w.input() + "\",\"answer\":42}", 400);
        resume.bad(ALICE, json, "{\"clarifyId\":\"" + w.input() + "\"}", 400);
        resume.bad(BOB, json, "{\"clarifyId\":\"" + w.input() + "\",\"answer\":\"Paris\"}", 404);
        resume.common();
        Endpoint edit = new Endpoint(cases, "POST", "/messages/{id}/edit", BASE + "/messages/" + w.userMessage() + "/edit");
        edit.bad(ALICE, json, "{}", 400);
        edit.bad(ALICE, json, "{\"text\":42}", 400);
        edit.bad(ALICE, json, "{\"text\":\"  \"}", 400);
        edit.bad(ALICE, json, "{\"text\":\"hi\",\"skill\":\"../../etc/passwd\"}", 400);
        edit.bad(ALICE, json, "{\"text\":\"hi\",\"modelId\":\"nope\"}", 400);
        edit.bad(ALICE, json, "{\"text\":\"hi\"", 400);
        edit.at(BASE + "/messages/" + w.answer() + "/edit").bad(ALICE, json, "{\"text\":\"hi\"}", 400);
        edit.at(BASE + "/messages/" + w.bobAnswer() + "/edit").bad(ALICE, json, "{\"text\":\"hi\"}", 404);
        edit.at(BASE + "/messages/" + NO_SUCH_ID + "/edit").bad(ALICE, json, "{\"text\":\"hi\"}", 404);
        edit.common();

        Endpoint activate = new Endpoint(cases, "POST", "/messages/{id}/activate",
                BASE + "/messages/" + w.userMessage() + "/activate");
        activate.at(BASE + "/messages/" + w.bobAnswer() + "/activate").bad(ALICE, null, null, 404);
        activate.at(BASE + "/messages/" + NO_SUCH_ID + "/activate").bad(ALICE, null, null, 404);
        activate.common();

        Endpoint rollback = new Endpoint(cases, "POST", "/messages/{id}/rollback",
                BASE + "/messages/" + w.answer() + "/rollback");
        rollback.at(BASE + "/messages/" + w.userMessage() + "/rollback").bad(ALICE, null, null, 400);
        rollback.at(BASE + "/messages/" + w.bobAnswer() + "/rollback").bad(ALICE, null, null, 404);
        rollback.at(BASE + "/messages/" + NO_SUCH_ID + "/rollback").bad(ALICE, null, null, 404);
        rollback.common();

        Endpoint proceed = new Endpoint(cases, "POST", "/messages/{id}/continue",
                BASE + "/messages/" + w.answer() + "/continue");
        proceed.at(BASE + "/messages/" + w.userMessage() + "/continue").bad(ALICE, null, null, 400);
        proceed.at(BASE + "/messages/" + w.bobAnswer() + "/continue").bad(ALICE, null, null, 404);
        proceed.at(BASE + "/messages/" + NO_SUCH_ID + "/continue").bad(ALICE, null, null, 404);
        proceed.common();

        Endpoint undo = new Endpoint(cases, "POST", "/sessions/{id}/undo", BASE + "/sessions/" + w.session() + "/undo");
        undo.at(BASE + "/sessions/" + w.bobSession() + "/undo").bad(ALICE, null, null, 404);
        undo.at(BASE + "/sessions/" + NO_SUCH_ID + "/undo").bad(ALICE, null, null, 404);
        undo.common();

        Endpoint agui = new Endpoint(cases, "POST", "/agui", BASE + "/agui");
        agui.bad(ALICE, json, "{}", 400);
        agui.bad(ALICE, json, "[]", 400);
        agui.bad(ALICE, json, "{\"threadId\":\"" + w.session() + "\"", 400);
        agui.bad(ALICE, json, "{\"threadId\":\"" + w.bobSession() + "\",\"runId\":\"r-bad\",\"messages\":"
                + "[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"hi\"}]}", 404);
        String newThread = "{\"threadId\":\"agui-new-thread\",\"runId\":\"r-bad\",\"messages\":"
                + "[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"%s\"}]%s}";
        agui.bad(ALICE, json, newThread.formatted("x".repeat(100_001), ""), 400);
        agui.bad(ALICE, json, newThread.formatted("hi", ",\"tools\":[{\"name\":\"refund_order\",\"parameters\":{}}]"), 400);
        agui.common();

        String ck = BASE + "/copilotkit";
        Endpoint run = new Endpoint(cases, "POST", "/copilotkit/agent/{agentId}/run", ck + "/agent/default/run");
        run.bad(ALICE, json, "{}", 400);
        run.bad(ALICE, json, "[]", 400);
        run.bad(ALICE, json, "{\"threadId\":\"" + w.session() + "\"", 400);
        run.bad(ALICE, json, "{\"threadId\":\"" + w.bobSession() + "\",\"runId\":\"r-bad\",\"messages\":"
                + "[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"hi\"}]}", 404);
        run.bad(ALICE, json, newThread.formatted("x".repeat(100_001), ""), 400);
        run.bad(ALICE, json, newThread.formatted("hi", ",\"tools\":[{\"name\":\"refund_order\",\"parameters\":{}}]"), 400);
        run.at(ck + "/agent/nope/run").bad(ALICE, json, newThread.formatted("hi", ""), 404);
        run.common();
        Endpoint connect = new Endpoint(cases, "POST", "/copilotkit/agent/{agentId}/connect",
                ck + "/agent/default/connect");
        connect.bad(ALICE, json, "{}", 400);
        connect.bad(ALICE, json, "{\"threadId\":\"" + w.waitingSession() + "\"}", 400);
        connect.at(ck + "/agent/nope/connect").bad(ALICE, json, newThread.formatted("hi", ""), 404);
        connect.common();
        Endpoint stop = new Endpoint(cases, "POST", "/copilotkit/agent/{agentId}/stop/{threadId}",
                ck + "/agent/default/stop/" + w.waitingSession());
        stop.bad(ALICE, json, "{\"force\":true}", 400);
        stop.bad(ALICE, json, "{\"runId\":5}", 400);
        stop.bad(ALICE, json, "[]", 400);
        stop.at(ck + "/agent/nope/stop/" + w.waitingSession()).bad(ALICE, json, "{}", 404);
        stop.common();
        for (String route : List.of("", "/")) {
            Endpoint envelope = new Endpoint(cases, "POST", "/copilotkit" + route, ck + route);
            envelope.bad(ALICE, json, "{}", 400);
            envelope.bad(ALICE, json, "{\"method\":\"transcribe\"}", 400);
            envelope.bad(ALICE, json, "{\"method\":\"agent/run\",\"params\":{\"agentId\":\"default\"},\"body\":{}}", 400);
            envelope.bad(ALICE, json, "{\"method\":\"agent/run\",\"params\":{\"agentId\":\"default\"},\"body\":7}", 400);
            envelope.bad(ALICE, json, "{\"method\":\"agent/stop\",\"params\":{\"agentId\":\"default\",\"threadId\":\""
                    + w.waitingSession() + "\"},\"body\":{\"force\":true}}", 400);
            envelope.bad(ALICE, json, "{\"method\":\"agent/stop\",\"params\":{\"agentId\":\"nope\",\"threadId\":\""
                    + w.waitingSession() + "\"}}", 404);
            envelope.common();
        }
        // a method a route does not take, even with a body it would act on: 405 in CopilotKit's shape
        String wouldRun = newThread.formatted("hi", "");
        for (String method : List.of("PUT", "PATCH", "DELETE")) {
            for (String route : List.of("", "/", "/agent/{agentId}/run", "/agent/{agentId}/connect",
                    "/agent/{agentId}/stop/{threadId}", "/info", "/threads")) {
                String path = ck + route.replace("{agentId}", "default").replace("{threadId}", w.waitingSession());
                new Endpoint(cases, method, "/copilotkit" + route, path).bad(ALICE, json, wouldRun, 405);
            }
        }
        for (String route : List.of("/info", "/threads")) {
            new Endpoint(cases, "POST", "/copilotkit" + route, ck + route).bad(ALICE, json, wouldRun, 405);
        }

        // the waiting run's script gives up after 30 s without an answer: the cases aimed at it go first
        cases.sort(Comparator.comparing(c -> !(c.path().contains(w.waitingRun()) || c.path().contains(w.waitingSession()))));
        return cases;
    }

    /** Collects the bad requests of one endpoint, at its default path or another one. */
    private record Endpoint(List<BadRequest> cases, String method, String pattern, String path) {
        Endpoint {
            pattern = BASE + pattern;
        }

        Endpoint at(String otherPath) {
            return new Endpoint(cases, method, pattern.substring(BASE.length()), otherPath);
        }

        void bad(String owner, String contentType, String body, int status) {
            cases.add(new BadRequest(method, pattern, path, owner, contentType, body, null, status));
        }

        /**
         * What every endpoint refuses: a body that is not declared JSON, a request naming no caller, and what
         * a page on another site makes a browser send.
         */
        void common() {
            bad(ALICE, "text/plain", "{\"message\":\"hi\",\"title\":\"x\",\"rating\":\"up\",\"answer\":\"Paris\"}", 415);
            bad(ALICE, null, "{\"message\":\"hi\"}", 415);
            bad(null, "application/json", "{\"message\":\"hi\",\"title\":\"x\",\"rating\":\"up\",\"answer\":\"Paris\"}", 401);
            crossSite();
        }

        /**
         * Requests whose {@code Origin} is neither the server's own nor allowed: a bodiless POST (what
         * {@code fetch(url, {method: 'POST', mode: 'no-cors', credentials: 'include'})} on another site sends,
         * with the person's cookies), a JSON body (had CORS let it through), and the opaque origin "null".
         */
        void crossSite() {
            String good = "{\"message\":\"hi\",\"text\":\"hi\",\"title\":\"x\",\"rating\":\"up\",\"answer\":\"Paris\"}";
            cases.add(new BadRequest(method, pattern, path, ALICE, null, null, OTHER_SITE, 403));
            cases.add(new BadRequest(method, pattern, path, ALICE, "application/json", good, OTHER_SITE, 403));
            cases.add(new BadRequest(method, pattern, path, ALICE, null, null, "null", 403));
            cases.add(new BadRequest(method, pattern, path, ALICE, null, null, ALLOWED_SITE + ".evil.example", 403));
        }
    }

    /** Parley's POST, PUT, PATCH and DELETE endpoints as "METHOD pattern". */
    private Set<String> mutatingEndpoints() {
        Set<String> endpoints = new TreeSet<>();
        for (Map.Entry<RequestMappingInfo, HandlerMethod> mapping : mappings.getHandlerMethods().entrySet()) {
            if (!mapping.getValue().getBeanType().getPackageName().startsWith("dev.parley")) {
                continue;
            }
            for (RequestMethod method : mapping.getKey().getMethodsCondition().getMethods()) {
                if (MUTATING.contains(method)) {
                    for (String pattern : mapping.getKey().getPatternValues()) {
                        endpoints.add(method.name() + " " + pattern);
                    }
                }
            }
        }
        assertThat(endpoints).as("Parley's mutating endpoints, as Spring maps them").isNotEmpty();
        return endpoints;
    }

    /** The dump once two in a row agree: the setup's runs have written everything they will write. */
    private Map<String, List<String>> settledDump() throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Map<String, List<String>> last = dump();
        while (true) {
            Thread.sleep(300);
            Map<String, List<String>> now = dump();
            if (now.equals(last)) {
                return now;
            }
            assertThat(System.nanoTime()).as("the tables to stop changing after the setup").isLessThan(deadline);
            last = now;
        }
    }

    /** Every table of the SQLite file, each row as its columns' values, rows sorted: compared as data. */
    private Map<String, List<String>> dump() throws SQLException {
        Map<String, List<String>> tables = new TreeMap<>();
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            List<String> names = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
                while (rows.next()) {
                    names.add(rows.getString(1));
                }
            }
            for (String name : names) {
                List<String> rows = new ArrayList<>();
                try (ResultSet result = statement.executeQuery("SELECT * FROM \"" + name.replace("\"", "\"\"") + "\"")) {
                    int columns = result.getMetaData().getColumnCount();
                    while (result.next()) {
                        StringBuilder row = new StringBuilder();
                        for (int i = 1; i <= columns; i++) {
                            Object value = result.getObject(i);
                            row.append(result.getMetaData().getColumnName(i)).append('=')
                                    .append(value instanceof byte[] bytes ? HexFormat.of().formatHex(bytes) : value)
                                    .append('\u0001');
                        }
                        rows.add(row.toString());
                    }
                }
                rows.sort(Comparator.naturalOrder());
                tables.put(name, rows);
            }
        }
        return tables;
    }
}
