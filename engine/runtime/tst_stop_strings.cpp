#include <QtTest>

#include "runtime/stop_strings.h"

using powerinfer::runtime::StopStringMatcher;

class TestStopStrings : public QObject {
    Q_OBJECT
private slots:
    void splitAcrossPieces() {
        StopStringMatcher m({"</answer>", "\n\nUser:"});
        std::string shown;
        for (const char* piece : {"The answer", " is 4.", "</ans", "wer> and more"})
            shown += m.feed(piece);
        QVERIFY(m.stopped());
        QCOMPARE(shown, std::string("The answer is 4."));
        QCOMPARE(m.feed("later"), std::string());
    }

    void heldBackThenReleased() {
        StopStringMatcher m({"STOP"});
        QCOMPARE(m.feed("go ST"), std::string("go "));
        QCOMPARE(m.feed("OP"), std::string());
        QVERIFY(m.stopped());

        StopStringMatcher n({"STOP"});
        QCOMPARE(n.feed("go ST"), std::string("go "));
        QCOMPARE(n.feed("ill"), std::string("STill"));
        QCOMPARE(n.feed("S"), std::string());
        QCOMPARE(n.flush(), std::string("S"));
        QVERIFY(!n.stopped());
    }

    void earliestWins() {
        StopStringMatcher m({"bc", "a"});
        QCOMPARE(m.feed("xxabc"), std::string("xx"));
    }

    void noStops() {
        StopStringMatcher m({"", {}});
        QCOMPARE(m.feed("anything"), std::string("anything"));
        QCOMPARE(m.flush(), std::string());
    }
};

QTEST_GUILESS_MAIN(TestStopStrings)
#include "tst_stop_strings.moc"
