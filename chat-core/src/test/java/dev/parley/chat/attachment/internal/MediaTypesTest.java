package dev.parley.chat.attachment.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MediaTypesTest {

    private static byte[] hex(String hex) {
        return java.util.HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    private static String sniff(byte[] head) {
        return MediaTypes.sniff(head, head.length, true);
    }

    @ParameterizedTest
    @CsvSource({
        "89504E470D0A1A0A0000000D, image/png",
        "FFD8FFE000104A46, image/jpeg",
        "4749463839610100, image/gif",
        "524946460000000057454250, image/webp",
        "524946460000000057415645, audio/wav",
        "255044462D312E37, application/pdf",
        "4F67675300020000, audio/ogg",
        "1A45DFA301000000, video/webm",
        "0000001866747970, video/mp4",
        "4944330400000000, audio/mpeg",
        "FFFB904400000000, audio/mpeg",
        "504B030414000600, application/zip",
        "0001020300FF7F80, application/octet-stream",
    })
    void signaturesNameTheirFormats(String head, String type) {
        assertThat(sniff(hex(head))).isEqualTo(type);
    }

    @Test
    void textIsUtf8WithoutNulBytesAndHtmlAndSvgAreCalledSo() {
        assertThat(sniff("plain, with ünïcode ✓".getBytes(StandardCharsets.UTF_8))).isEqualTo("text/plain");
        assertThat(sniff("bad \u0000 byte".getBytes(StandardCharsets.UTF_8))).isEqualTo("application/octet-stream");
        assertThat(sniff(hex("C328"))).isEqualTo("application/octet-stream");
        assertThat(sniff("\n  <!doctype HTML><p>".getBytes(StandardCharsets.UTF_8))).isEqualTo("text/html");
        assertThat(sniff("<?xml version='1.0'?>\n<svg/>".getBytes(StandardCharsets.UTF_8))).isEqualTo("image/svg+xml");
        byte[] cut = "é".repeat(10).getBytes(StandardCharsets.UTF_8);
        assertThat(MediaTypes.sniff(cut, cut.length - 1, false)).isEqualTo("text/plain");
        assertThat(MediaTypes.sniff(cut, cut.length - 1, true)).isEqualTo("application/octet-stream");
    }

    @ParameterizedTest
    @CsvSource(nullValues = "null", value = {
        "null, a.png, image/png, image/png",
        "image/jpg, a.jpg, image/jpeg, image/jpeg",
        "audio/webm, voice.webm, video/webm, audio/webm",
        "'text/markdown; charset=utf-8', notes.md, text/plain, text/markdown",
        "null, notes.md, text/plain, text/markdown",
        "application/octet-stream, data.csv, text/plain, text/csv",
        "application/json, x.json, text/plain, application/json",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document, a.docx, application/zip,"
                + " application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "text/plain, page.txt, text/html, text/html",
        "application/x-custom, blob.bin, application/octet-stream, application/x-custom",
    })
    void theContentDecidesAndAgreeingClaimsNameIt(String claimed, String name, String sniffed, String expected) {
        assertThat(MediaTypes.resolve(claimed, name, sniffed)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({
        "image/png, application/pdf",
        "application/pdf, text/plain",
        "text/plain, image/png",
        "image/png, application/octet-stream",
        "text/csv, application/octet-stream",
        "application/zip, image/gif",
    })
    void aClaimTheContentContradictsIsRefused(String claimed, String sniffed) {
        assertThatThrownBy(() -> MediaTypes.resolve(claimed, "f", sniffed))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT))
                .hasMessageContaining(claimed);
    }

    @ParameterizedTest
    @CsvSource(nullValues = "null", value = {
        "photo.png, photo.png",
        "C:\\Users\\me\\report.pdf, report.pdf",
        "../../etc/passwd, passwd",
        "'  ..hidden.txt. ', hidden.txt",
        "a<b>c:d\"e|f?g*h.txt, abcdefgh.txt",
        "'', file",
        "null, file",
        "'\u202egnp.exe', gnp.exe",
    })
    void fileNamesKeepNoPathOrDangerousCharacters(String name, String expected) {
        assertThat(FileNames.sanitise(name)).isEqualTo(expected);
    }

    @Test
    void longNamesKeepTheirExtension() {
        String name = FileNames.sanitise("x".repeat(500) + ".pdf");
        assertThat(name).hasSize(FileNames.MAX_LENGTH).endsWith("x.pdf");
    }
}
