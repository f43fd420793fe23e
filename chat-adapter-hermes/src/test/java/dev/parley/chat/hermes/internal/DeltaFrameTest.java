package dev.parley.chat.hermes.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The scanner reads what Jackson's tokens read, for every input; it leaves to Jackson what it cannot read. */
class DeltaFrameTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> FRAMES = List.of(
            "{\"runId\":\"r1\",\"seq\":12,\"tsMicros\":1795000000003000,\"kind\":\"text_delta\",\"text\":\"t12 \"}",
            "{\"runId\":\"r1\",\"seq\":3,\"kind\":\"thinking\",\"text\":\"Let me think.\"}",
            " {\n\t\"seq\" : 4 ,\r\n \"kind\" :\"text_delta\" , \"text\": \"a\" } ",
            "{\"kind\":\"text_delta\",\"text\":\"c\"}",
            "{\"seq\":5,\"kind\":\"text_delta\",\"text\":7}",
            "{\"seq\":6,\"kind\":\"text_delta\",\"text\":null}",
            "{\"seq\":\"7\",\"kind\":\"text_delta\",\"text\":\"d\"}",
            "{\"seq\":8,\"text\":\"e\",\"kind\":\"text_delta\",\"extra\":true}",
            "{\"seq\":2,\"kind\":\"thinking\",\"text\":\"a\",\"meta\":{\"nested\":[1,2]}}",
            "{\"seq\":9,\"kind\":\"done\",\"status\":\"completed\"}",
            "{\"seq\":10,\"kind\":\"status\",\"kind\":\"text_delta\",\"text\":\"x\",\"text\":\"y\",\"seq\":11}",
            "{\"seq\":10,\"kind\":\"text_delta\",\"kind\":\"status\"}",
            "{\"seq\":13,\"kind\":\"text_delta\",\"text\":\"line\\nbreak \\\"quoted\\\" \\u00e9\\ud83d\\ude00 \\/\"}",
            "{\"seq\":14,\"kind\":\"text_delta\",\"text\":\"é 😀 中文 \u2028\"}",
            "{\"seq\":15,\"kind\":\"text_\\u0064elta\",\"text\":\"z\"}",
            "{\"s\\u0065q\":16,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":017,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":-18,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":19.0,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":2e1,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":99999999999999999999,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":123456789012345678,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":21,\"kind\":\"text_delta\",\"text\":\"z\"} trailing",
            "{\"seq\":22,\"kind\":\"text_delta\",\"text\":\"z\",}",
            "{\"seq\":23,\"kind\":\"text_delta\",\"text\":\"tab\there\"}",
            "{\"seq\":24,\"kind\":\"text_delta\" \"text\":\"z\"}",
            "{\"seq\":25,\"kind\":\"text_delta\",\"text\":\"unterminated}",
            "{seq:26,\"kind\":\"text_delta\"}",
            "{\"seq\":0,\"kind\":\"text_delta\",\"text\":\"\"}",
            "{\"seq\":27,\"kind\":\"text_delta\",\"text\":\"z\"",
            "[{\"seq\":28,\"kind\":\"text_delta\"}]",
            "\uFEFF{\"seq\":29,\"kind\":\"text_delta\",\"text\":\"z\"}",
            "{\"seq\":30,\"kind\":\"text_delta\",\"text\":\"z\"}\u0001",
            "{\u000b\"seq\":31,\"kind\":\"text_delta\"}",
            "{}", "{ }", "", "   ", "null", "\"text_delta\"", "{\"kind\":\"thinking\"}",
            "{\"seq\":32,\"kind\":\"thinking\",\"text\":\"" + "long ".repeat(4_000) + "\"}");

    @Test
    void everyFrameReadsAsJacksonsTokensReadIt() {
        for (String frame : FRAMES) {
            assertThat(DeltaFrame.read(JSON, frame)).as(frame).isEqualTo(DeltaFrame.parse(JSON, frame));
        }
    }

    @Test
    void theBridgesOwnFramesAreReadByTheScanner() {
        assertThat(DeltaFrame.scan(FRAMES.get(0))).isEqualTo(new DeltaFrame(12, "text_delta", "t12 "));
        assertThat(DeltaFrame.scan(FRAMES.get(1))).isEqualTo(new DeltaFrame(3, "thinking", "Let me think."));
        assertThat(DeltaFrame.scan(FRAMES.get(2))).isEqualTo(new DeltaFrame(4, "text_delta", "a"));
        assertThat(DeltaFrame.scan(FRAMES.get(13))).isEqualTo(new DeltaFrame(14, "text_delta", "é 😀 中文 \u2028"));
        assertThat(DeltaFrame.scan(FRAMES.get(9))).isSameAs(DeltaFrame.NONE);
        assertThat(DeltaFrame.scan(FRAMES.get(12))).isNull();
    }

    @Test
    void mutatedFramesReadAsJacksonsTokensReadThem() {
        String alphabet = "\\\"u{}[],: \t\n\r\u0001\u001f0123456789-+.eEntfalsruTX\u00e9\ud83d\ude00\u2028\uFEFF/";
        Random random = new Random(18);
        int scanned = 0;
        for (int round = 0; round < 50_000; round++) {
            StringBuilder frame = new StringBuilder(FRAMES.get(random.nextInt(FRAMES.size() - 1)));
            int edits = 1 + random.nextInt(3);
            for (int e = 0; e < edits && frame.length() > 0; e++) {
                int at = random.nextInt(frame.length());
                switch (random.nextInt(4)) {
                    case 0 -> frame.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
                    case 1 -> frame.deleteCharAt(at);
                    case 2 -> frame.setCharAt(at, alphabet.charAt(random.nextInt(alphabet.length())));
                    default -> frame.setLength(at);
                }
            }
            String data = frame.toString();
            DeltaFrame read = DeltaFrame.read(JSON, data);
            assertThat(read).as(data).isEqualTo(DeltaFrame.parse(JSON, data));
            if (DeltaFrame.scan(data) != null) {
                scanned++;
            }
        }
        assertThat(scanned).as("mutations the scanner decided itself").isGreaterThan(3_000);
    }
}
