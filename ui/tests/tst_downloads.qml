import QtQuick
import QtQuick.Controls
import QtTest
import PowerInfer.Ui
import PowerInfer.App

// Issue 30, items 3 and 4, in the "Get a model" page: a pasted-link
// download that a kill -9 interrupted is listed paused with its progress and
// Resume (a Range request for the rest), then shows a progress bar, speed and
// time left and can be paused again; its file can be renamed, and a name
// already taken is met with a free one.
TestCase {
    id: testCase
    name: "Downloads"
    when: windowShown
    visible: true
    width: 1000
    height: 760

    Component {
        id: pageComponent
        CatalogPage {
            controller: testController
        }
    }

    function cleanup() {
        testDownloads.restoreFolder()
    }

    function byName(page, name) {
        return findChild(page.contentItem, name)
    }

    function test_anInterruptedPastedLinkResumesWithProgressAndTimeLeft() {
        const file = testDownloads.interruptedDownload(1 << 20)
        compare(file, "model.gguf")
        const page = createTemporaryObject(pageComponent, testCase)
        page.open()
        tryVerify(() => page.opened, 3000)
        const status = byName(page, "status_model.gguf")
        verify(status, "the interrupted download is listed")
        compare(status.text, "Paused  ·  1.0 MB of 4.0 MB")
        verify(byName(page, "note_model.gguf").text.indexOf("Unfinished from last time") >= 0)
        const bar = byName(page, "progress_model.gguf")
        verify(bar.visible, "a paused download shows how far it got")
        fuzzyCompare(bar.value, 0.25, 0.01)
        const resume = byName(page, "resume_model.gguf")
        verify(resume && resume.visible, "Resume is offered")
        compare(resume.text, "Resume")
        mouseClick(resume)
        // Downloading: speed and time left once a second of data came in.
        tryVerify(() => status.text.indexOf("Downloading") === 0 && status.text.indexOf("left") > 0,
                  5000, status.text)
        verify(bar.visible && !bar.indeterminate)
        compare(testDownloads.ranges()[0], "bytes=1048576-")
        const pause = byName(page, "pause_model.gguf")
        verify(pause.visible)
        mouseClick(pause)
        tryVerify(() => status.text.indexOf("Paused") === 0, 3000, status.text)
        verify(resume.visible)
        mouseClick(resume)
        tryVerify(() => byName(page, "note_model.gguf").text.indexOf("could not be verified") >= 0,
                  15000, status.text)
        compare(testDownloads.folderFiles(), ["model.gguf"])
        const ranges = testDownloads.ranges()
        verify(ranges.length === 2 && ranges[1].startsWith("bytes="), ranges.join(","))
        // The whole note, wrapped: nothing cut off (issue 30, item 14).
        const note = byName(page, "note_model.gguf")
        compare(note.wrapMode, Text.Wrap)
        verify(!note.truncated)

        // Rename: a name that is taken gets a free one offered.
        testDownloads.touch("taken.gguf")
        mouseClick(byName(page, "rename_model.gguf"))
        const dialog = findChild(page, "renameDownloadDialog")
        tryVerify(() => dialog.opened, 3000)
        const field = findChild(dialog.contentItem, "renameField")
        compare(field.text, "model.gguf")
        field.text = "taken"
        mouseClick(findChild(dialog.footer, "renameSave"))
        const problem = findChild(dialog.contentItem, "renameProblem")
        verify(problem.text.indexOf("taken.gguf is already in the models folder: taken-2.gguf is free") >= 0,
               problem.text)
        verify(dialog.visible)
        compare(field.text, "taken-2.gguf")
        mouseClick(findChild(dialog.footer, "renameSave"))
        tryVerify(() => !dialog.visible, 3000)
        compare(testDownloads.folderFiles(), ["taken-2.gguf", "taken.gguf"])
        tryVerify(() => byName(page, "status_taken-2.gguf"), 2000)
        page.close()
    }
}
