import QtQuick
import QtQuick.Controls
import QtTest
import PowerInfer.Ui
import PowerInfer.App

// Issue 17, defect 10 (the smaller items) through the real window: Esc
// clears the conversation search, the repeat penalty is a control of the
// chat settings, and code blocks are coloured by their language.
TestCase {
    id: testCase
    name: "FirstHour"
    when: windowShown
    visible: true
    width: 400
    height: 300

    function openWindow() {
        const component = Qt.createComponent("qrc:/PowerInfer/Ui/Main.qml")
        compare(component.status, Component.Ready, component.errorString())
        const window = component.createObject(null, { controller: testController })
        window.width = 1280
        window.height = 800
        window.requestActivate()
        tryVerify(() => window.active, 2000)
        return window
    }
    function closeWindow(window) {
        window.destroy()
        testCase.Window.window.requestActivate()
        tryVerify(() => testCase.Window.window.active, 2000)
    }
    function findBy(item, test) {
        for (let i = 0; i < item.children.length; ++i) {
            const c = item.children[i]
            if (test(c))
                return c
            const found = findBy(c, test)
            if (found)
                return found
        }
        return null
    }

    function test_escapeClearsTheSearch() {
        testStore.seedReply("A question about narwhals", "They have tusks.", "complete")
        const window = openWindow()
        keyClick(Qt.Key_F, Qt.ControlModifier)
        const search = findBy(window.contentItem,
                              c => c.Accessible && c.Accessible.name === "Search conversations"
                                   && c.placeholderText !== undefined)
        verify(search)
        tryVerify(() => search.activeFocus, 2000)
        for (const ch of "narwhal")
            keyClick(ch)
        compare(search.text, "narwhal")
        tryCompare(testController, "searchText", "narwhal", 3000)
        keyClick(Qt.Key_Escape)
        compare(search.text, "")
        tryCompare(testController, "searchText", "", 3000)
        closeWindow(window)
    }

    function test_theRepeatPenaltyIsASetting() {
        const settings = testController.settings
        settings.repeatPenalty = 1.0
        const window = openWindow()
        keyClick(Qt.Key_Comma, Qt.ControlModifier)
        const drawer = findChild(window, "settingsDrawer")
        tryVerify(() => drawer.opened, 2000)
        const row = findChild(drawer.contentItem, "repeatPenaltyRow")
        verify(row, "a repeat penalty control in the chat settings")
        const slider = findBy(row, c => c.stepSize !== undefined && c.from !== undefined
                                        && c.increase !== undefined)
        verify(slider)
        slider.forceActiveFocus()
        keyClick(Qt.Key_Right)
        keyClick(Qt.Key_Right)
        tryVerify(() => Math.abs(settings.repeatPenalty - 1.1) < 1e-6, 2000,
                  "repeat penalty " + settings.repeatPenalty)
        settings.repeatPenalty = 1.0
        closeWindow(window)
    }

    function test_codeBlocksAreColouredByTheirLanguage() {
        const code = "// add two numbers\nint add(int a, int b) {\n    return a + 42; /* sum */\n}\n"
                     + "const char* s = \"text\";"
        const id = testStore.seedReply("Some C++ please", "Here:\n\n```cpp\n" + code + "\n```\n",
                                       "complete")
        const window = openWindow()
        testController.openConversation(id)
        tryCompare(testController.messages, "count", 2, 3000)
        // The code block (found by its properties), then its highlighter (a
        // plain QObject inside it: TestCase.findChild reaches it from there).
        let highlighter = null
        tryVerify(() => {
            const block = findBy(window.contentItem, c => c.code !== undefined
                                                          && c.language === "cpp")
            highlighter = block ? findChild(block, "codeHighlighter") : null
            return highlighter !== null
        }, 3000)
        verify(highlighter.knownLanguage)
        const at = word => code.indexOf(word)
        compare(highlighter.kindAt(at("add two")), "comment")
        compare(highlighter.kindAt(at("int add")), "keyword")
        compare(highlighter.kindAt(at("return")), "keyword")
        compare(highlighter.kindAt(at("42")), "number")
        compare(highlighter.kindAt(at("sum")), "comment")
        compare(highlighter.kindAt(at("\"text\"") + 1), "string")
        compare(highlighter.kindAt(at("add(")), "")  // a name: plain
        // The colours are the theme's.
        verify(Qt.colorEqual(highlighter.keywordColor, Theme.syntaxKeyword))
        closeWindow(window)
    }
}
