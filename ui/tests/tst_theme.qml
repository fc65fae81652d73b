import QtQuick
import QtQuick.Controls
import QtTest
import PowerInfer.Ui
import PowerInfer.App

// Issue 17, defect 10: the theme through the real window. "Follow the
// system" was invisible in the theme list (white on white), the settings
// drawer's spin boxes stayed white after switching to dark until the drawer
// was reopened, the conversation menu was the Basic style's square in the
// desktop's colours, and the file dialog (a widget dialog: the application
// palette) drew its selected row unreadably against the app's theme.
TestCase {
    id: testCase
    name: "Theme"
    when: windowShown
    visible: true
    width: 400
    height: 300

    function lightness(c) {
        return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b
    }
    // The window as drawn (popups included): TestCase.grabImage(item) crops
    // at the item's position in its parent, so items are sampled through
    // the window's content item at their mapped position.
    function windowImage(item) {
        return grabImage(item.Window.window.contentItem)
    }
    function pixelOf(item, x, y) {
        const p = item.mapToItem(item.Window.window.contentItem, x, y)
        return windowImage(item).pixel(Math.round(p.x), Math.round(p.y))
    }
    // The largest lightness difference between the item's pixels and the
    // colour `bg`, on a grid: how readable its text is on that background.
    function maxContrast(item, bg) {
        const image = windowImage(item)
        const origin = item.mapToItem(item.Window.window.contentItem, 0, 0)
        let best = 0
        for (let y = 2; y < item.height - 2; y += 2)
            for (let x = 2; x < item.width - 2; x += 2)
                best = Math.max(best, Math.abs(lightness(image.pixel(Math.round(origin.x + x),
                                                                     Math.round(origin.y + y)))
                                               - lightness(bg)))
        return best
    }
    function findByAccessibleName(item, name) {
        for (let i = 0; i < item.children.length; ++i) {
            const c = item.children[i]
            if (c.Accessible && c.Accessible.name === name && c.popup !== undefined)
                return c
            const found = findByAccessibleName(c, name)
            if (found)
                return found
        }
        return null
    }

    // With PI_SCREENSHOT_DIR set: the window at 800x600 with `show`
    // (re)opening what is shot, saved as NAME-800x600.png, and at 1920x1080
    // where the screen holds it (TestCase.grabImage cannot save a window
    // larger than the screen: the offscreen one is 800x600, so
    // scripts/screenshots-theme runs this under Xvfb at 1920x1080).
    function shoot(window, name, show) {
        // One theme per run (PI_SCREENSHOT_THEME): a second grab in the
        // same run saves nothing.
        if (testScreenshotDir === "" || name.indexOf("-" + testScreenshotTheme) < 0)
            return
        const sizes = [[800, 600]]
        if (window.screen && window.screen.width >= 1920 && window.screen.height >= 1080)
            sizes.push([1920, 1080])
        for (const size of sizes) {
            window.width = size[0]
            window.height = size[1]
            tryVerify(() => window.contentItem.width === size[0], 2000)
            show()
            wait(400)
            // (save() reports nothing in Qt 6.4: the script lists the files.)
            grabImage(window.contentItem).save(
                testScreenshotDir + "/" + name + "-" + size[0] + "x" + size[1] + ".png")
        }
    }

    function openWindow(mode) {
        testController.settings.themeMode = mode
        const component = Qt.createComponent("qrc:/PowerInfer/Ui/Main.qml")
        compare(component.status, Component.Ready, component.errorString())
        const window = component.createObject(null, { controller: testController })
        window.width = 1000
        window.height = 700
        window.requestActivate()
        tryVerify(() => window.active, 2000)
        return window
    }
    function closeWindow(window) {
        window.destroy()
        testController.settings.themeMode = "system"
        testCase.Window.window.requestActivate()
        tryVerify(() => testCase.Window.window.active, 2000)
    }

    function test_theSettingsDrawerFollowsAThemeSwitch() {
        const window = openWindow("light")
        keyClick(Qt.Key_Comma, Qt.ControlModifier)
        const drawer = findChild(window, "settingsDrawer")
        tryVerify(() => drawer.opened, 2000)
        const box = findChild(drawer.contentItem, "contextLengthBox")
        verify(box)
        wait(50)
        verify(lightness(pixelOf(box, box.width / 2, 3)) > 0.5, "light spin box")
        // Switched while the drawer is open: the spin box follows at once.
        testController.settings.themeMode = "dark"
        verify(Theme.dark)
        tryVerify(() => Qt.colorEqual(box.palette.base, Theme.surface), 2000,
                  "spin box base " + box.palette.base + ", theme " + Theme.surface)
        wait(50)
        const dark = pixelOf(box, box.width / 2, 3)
        verify(lightness(dark) < 0.3, "the spin box stayed " + dark + " in the dark theme")
        testController.settings.themeMode = "light"
        tryVerify(() => Qt.colorEqual(box.palette.base, Theme.surface), 2000)
        wait(50)
        verify(lightness(pixelOf(box, box.width / 2, 3)) > 0.5, "back to light")
        closeWindow(window)
    }

    // Issue 30, item 11: in the dark theme the API key, remote URL and
    // model fields stayed white, and switches and slider handles were
    // nearly invisible against the drawer.
    function test_darkFieldsSwitchesAndHandles() {
        // Opened light and switched to dark while open, as a user does.
        const window = openWindow("light")
        keyClick(Qt.Key_Comma, Qt.ControlModifier)
        const drawer = findChild(window, "settingsDrawer")
        tryVerify(() => drawer.opened, 2000)
        testController.settings.themeMode = "dark"
        verify(Theme.dark)
        wait(100)
        const flick = findChild(drawer.contentItem, "settingsScroll").contentItem
        const reveal = item => {
            flick.contentY = Math.max(0, Math.min(flick.contentHeight - flick.height,
                item.mapToItem(flick.contentItem, 0, 0).y - 100))
            wait(150)
        }
        const bg = drawer.background.color
        for (const name of ["apiServerKey", "remoteUrl", "remoteApiKey", "remoteModel"]) {
            const field = findChild(drawer.contentItem, name)
            verify(field, name)
            reveal(field)
            const inside = pixelOf(field, field.width - 8, field.height / 2)
            verify(lightness(inside) < 0.3, name + " is " + inside + " in the dark theme")
        }
        const sw = findChild(drawer.contentItem, "apiServerSwitch")
        reveal(sw)
        const indicator = maxContrast(sw.indicator, bg)
        verify(indicator > 0.35, "the switch's contrast " + indicator.toFixed(2))
        let slider = null
        const findSlider = item => {
            for (let i = 0; i < item.children.length && !slider; ++i) {
                const c = item.children[i]
                if (c.handle !== undefined && c.stepSize !== undefined && c.increase !== undefined)
                    slider = c
                else
                    findSlider(c)
            }
        }
        findSlider(drawer.contentItem)
        verify(slider, "a slider")
        reveal(slider)
        const handle = maxContrast(slider.handle, bg)
        verify(handle > 0.35, "the slider handle's contrast " + handle.toFixed(2))
        shoot(window, "dark-fields-dark", () => reveal(findChild(drawer.contentItem, "remoteUrl")))
        closeWindow(window)
    }

    function test_everyThemeChoiceIsReadable() {
        for (const mode of ["light", "dark"]) {
            const window = openWindow(mode)
            keyClick(Qt.Key_Comma, Qt.ControlModifier)
            const drawer = findChild(window, "settingsDrawer")
            tryVerify(() => drawer.opened, 2000)
            const combo = findByAccessibleName(drawer.contentItem, "Theme")
            verify(combo, "the theme list")
            combo.popup.open()
            tryVerify(() => combo.popup.opened, 2000)
            const list = combo.popup.contentItem
            tryVerify(() => list.itemAtIndex(2) !== null, 2000)
            wait(100)
            const labels = []
            for (let i = 0; i < 3; ++i) {
                const row = list.itemAtIndex(i)
                labels.push(row.text)
                // The row's own background where it draws one, else the list's.
                const bg = row.background && row.background.visible && row.background.color.a > 0
                           ? row.background.color : combo.popup.background.color
                const contrast = maxContrast(row, bg)
                verify(contrast > 0.35, mode + ": \"" + row.text + "\" (highlighted "
                       + row.highlighted + ") has contrast " + contrast.toFixed(2))
            }
            compare(labels, ["Follow the system", "Light", "Dark"])
            shoot(window, "theme-list-" + mode, () => {
                combo.popup.close()
                const flick = findChild(drawer.contentItem, "settingsScroll").contentItem
                flick.contentY = Math.max(0, Math.min(flick.contentHeight - flick.height,
                    combo.mapToItem(flick.contentItem, 0, 0).y - 200))
                wait(100)
                combo.popup.open()
            })
            combo.popup.close()
            closeWindow(window)
        }
    }

    function test_theConversationMenuIsThemed() {
        testStore.seedReply("A question for the menu", "An answer.", "complete")
        const window = openWindow("light")
        // A delegate's menu (a popup: TestCase.findChild reaches it from its row).
        const list = findChild(window.contentItem, "conversationList")
        tryVerify(() => list.count > 0 && list.itemAtIndex(0) !== null, 3000)
        const menu = findChild(list.itemAtIndex(0), "conversationMenu")
        verify(menu, "the conversation menu is the themed AppMenu")
        for (const mode of ["light", "dark"]) {
            testController.settings.themeMode = mode
            menu.popup()
            tryVerify(() => menu.opened, 2000)
            const bg = menu.background
            compare(bg.objectName, "menuBackground")
            verify(bg.radius >= 8, "rounded")
            verify(Qt.colorEqual(bg.color, Theme.surfaceRaised), mode + ": " + bg.color)
            verify(bg.border.width >= 1)
            const first = menu.itemAt(0)
            compare(first.text, "Rename")
            verify(Qt.colorEqual(first.contentItem.color, Theme.text))
            verify(maxContrast(first, bg.color) > 0.35, mode + ": the menu's text is readable")
            verify(Qt.colorEqual(menu.itemAt(1).contentItem.color, Theme.danger),
                   "Delete reads as a destructive action")
            shoot(window, "conversation-menu-" + mode, () => {
                menu.close()
                const list = findChild(window.contentItem, "conversationList")
                const row = list.itemAtIndex(0)
                menu.popup(row, row.width - 40, row.height)
            })
            menu.close()
            tryVerify(() => !menu.visible, 2000)
        }
        closeWindow(window)
    }

    function test_widgetDialogsGetTheThemesPalette() {
        for (const mode of ["light", "dark"]) {
            const window = openWindow(mode)
            // What QFileDialog draws with: the application palette.
            tryVerify(() => Qt.colorEqual(ThemePalette.color("base"), Theme.surface), 2000,
                      mode + ": base " + ThemePalette.color("base"))
            verify(Qt.colorEqual(ThemePalette.color("text"), Theme.text))
            verify(Qt.colorEqual(ThemePalette.color("window"), Theme.background))
            // The selected row: accent with white text, readable in both.
            const hl = ThemePalette.color("highlight")
            const hlText = ThemePalette.color("highlightedText")
            verify(Qt.colorEqual(hl, Theme.accent))
            verify(Math.abs(lightness(hl) - lightness(hlText)) > 0.35,
                   mode + ": selected row " + hlText + " on " + hl)
            verify(Math.abs(lightness(ThemePalette.color("base"))
                            - lightness(ThemePalette.color("text"))) > 0.6)
            closeWindow(window)
        }
    }
}
