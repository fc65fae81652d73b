<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE" sourcelanguage="en">
<context>
    <name>CalibrateDialog</name>
    <message>
        <location filename="../CalibrateDialog.qml" line="15"/>
        <source>Calibrate for sparse inference</source>
        <translation>Für sparse Inferenz kalibrieren</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="33"/>
        <source>Runs the model over a text and records which FFN neurons fire, then measures on held-out text how much sparsity the model takes (the recommended level). With a GPU it also trains a small predictor per layer. A few minutes for a small model.</source>
        <translation>Lässt das Modell über einen Text laufen und zeichnet auf, welche FFN-Neuronen feuern, und misst dann an zurückgehaltenem Text, wie viel Sparsity das Modell verträgt (die empfohlene Stufe). Mit einer GPU trainiert es außerdem einen kleinen Prädiktor pro Schicht. Einige Minuten für ein kleines Modell.</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="45"/>
        <source>Bundled text (Frankenstein, public domain)</source>
        <translation>Mitgelieferter Text (Frankenstein, gemeinfrei)</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="52"/>
        <source>A text file</source>
        <translation>Eine Textdatei</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="57"/>
        <source>Choose…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="61"/>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>Text (*.txt *.md);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="69"/>
        <source>My conversations</source>
        <translation>Meine Unterhaltungen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="75"/>
        <source>Recommended level: measured on held-out text (the highest level whose perplexity rises at most 2 %)</source>
        <translation>Empfohlene Stufe: an zurückgehaltenem Text gemessen (die höchste Stufe, deren Perplexität um höchstens 2 % steigt)</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="90"/>
        <location filename="../CalibrateDialog.qml" line="108"/>
        <source>Target sparsity</source>
        <translation>Ziel-Sparsity</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="112"/>
        <source>Quick: %1 tokens instead of 8,192 (faster, a rougher sidecar)</source>
        <translation>Schnell: %1 Tokens statt 8.192 (schneller, ein gröberes Sidecar)</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="126"/>
        <source>Afterwards the app compares dense and sparse on this machine and keeps sparse on only if it is faster.</source>
        <translation>Danach vergleicht die App dicht und sparse auf diesem Rechner und lässt sparse nur eingeschaltet, wenn es schneller ist.</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="140"/>
        <source>Calibration progress</source>
        <translation>Fortschritt der Kalibrierung</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="145"/>
        <source>%1% · %2</source>
        <translation>%1 % · %2</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="147"/>
        <source>about %1 s left</source>
        <translation>noch etwa %1 s</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="148"/>
        <source>estimating…</source>
        <translation>wird geschätzt…</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="158"/>
        <source>Cancel calibration</source>
        <translation>Kalibrierung abbrechen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="158"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="163"/>
        <source>Calibrate</source>
        <translation>Kalibrieren</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="60"/>
        <source>Choose a text corpus</source>
        <translation>Textkorpus auswählen</translation>
    </message>
</context>
<context>
    <name>CatalogDelegate</name>
    <message>
        <location filename="../CatalogDelegate.qml" line="53"/>
        <source>%1, %2, %3</source>
        <translation>%1, %2, %3</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="70"/>
        <source>%1  (recommended first model)</source>
        <translation>%1  (empfohlenes erstes Modell)</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="78"/>
        <source>chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="78"/>
        <source>base</source>
        <translation>Basis</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="79"/>
        <source>%1k context</source>
        <translation>%1k Kontext</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="90"/>
        <source>Retry</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="90"/>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="96"/>
        <source>Load</source>
        <translation>Laden</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="102"/>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="107"/>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="113"/>
        <source>Cancel and delete the partial file</source>
        <translation>Abbrechen und die Teildatei löschen</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="161"/>
        <source>Download progress</source>
        <translation>Download-Fortschritt</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="184"/>
        <source>calibrated</source>
        <translation>kalibriert</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="189"/>
        <source>not calibrated</source>
        <translation>nicht kalibriert</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="190"/>
        <source>Calibrate in the background</source>
        <translation>Im Hintergrund kalibrieren</translation>
    </message>
    <message>
        <location filename="../CatalogDelegate.qml" line="191"/>
        <source>Make its sparse sidecar; the model is usable dense meanwhile</source>
        <translation>Erstellt sein Sparse-Sidecar; das Modell ist währenddessen dicht nutzbar</translation>
    </message>
</context>
<context>
    <name>CatalogPage</name>
    <message>
        <location filename="../CatalogPage.qml" line="22"/>
        <source>Get a model</source>
        <translation>Modell holen</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="42"/>
        <location filename="../CatalogPage.qml" line="184"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="67"/>
        <source>or paste an https:// link to a .gguf file</source>
        <translation>oder einen https://-Link zu einer .gguf-Datei einfügen</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="70"/>
        <source>Model link</source>
        <translation>Modell-Link</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="75"/>
        <source>SHA-256 (optional)</source>
        <translation>SHA-256 (optional)</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="78"/>
        <source>Expected SHA-256</source>
        <translation>Erwartete SHA-256</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="82"/>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <location filename="../CatalogPage.qml" line="174"/>
        <source>Files go to %1. Unfinished downloads resume where they stopped, also after a restart.</source>
        <translation>Dateien landen in %1. Unfertige Downloads werden dort fortgesetzt, wo sie aufgehört haben, auch nach einem Neustart.</translation>
    </message>
</context>
<context>
    <name>ChatHeader</name>
    <message>
        <location filename="../ChatHeader.qml" line="36"/>
        <source>Hide the conversations</source>
        <translation>Unterhaltungen ausblenden</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="36"/>
        <source>Show the conversations</source>
        <translation>Unterhaltungen einblenden</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="42"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="53"/>
        <source>Model: %1. Choose a model</source>
        <translation>Modell: %1. Modell wählen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="76"/>
        <source>Choose a model</source>
        <translation>Modell wählen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="101"/>
        <source>Sparse engine tuning</source>
        <translation>Feinabstimmung der Sparse-Engine</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="108"/>
        <source>Hide metrics</source>
        <translation>Messwerte ausblenden</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="108"/>
        <source>Show metrics</source>
        <translation>Messwerte anzeigen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="117"/>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="123"/>
        <source>More actions</source>
        <translation>Weitere Aktionen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="128"/>
        <source>Regenerate last reply</source>
        <translation>Letzte Antwort neu erzeugen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="134"/>
        <source>Export as Markdown…</source>
        <translation>Als Markdown exportieren…</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="139"/>
        <source>Export as JSON…</source>
        <translation>Als JSON exportieren…</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="144"/>
        <source>Export all conversations…</source>
        <translation>Alle Unterhaltungen exportieren…</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="148"/>
        <source>Import conversations…</source>
        <translation>Unterhaltungen importieren…</translation>
    </message>
</context>
<context>
    <name>ChatRow</name>
    <message>
        <location filename="../ChatRow.qml" line="56"/>
        <source>You</source>
        <translation>Sie</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="60"/>
        <source>Assistant</source>
        <translation>Assistent</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="41"/>
        <source>Reply failed</source>
        <translation>Antwort fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="42"/>
        <source>Interrupted</source>
        <translation>Unterbrochen</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="57"/>
        <source>End of the reply</source>
        <translation>Ende der Antwort</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="115"/>
        <source>Copy message</source>
        <translation>Nachricht kopieren</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="126"/>
        <source>Edit and resend</source>
        <translation>Bearbeiten und erneut senden</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="138"/>
        <source>Continue this reply</source>
        <translation>Diese Antwort fortsetzen</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="149"/>
        <source>Regenerate reply</source>
        <translation>Antwort neu erzeugen</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="159"/>
        <source>%1 tokens · %2 tok/s</source>
        <translation>%1 Tokens · %2 tok/s</translation>
    </message>
    <message>
        <location filename="../ChatRow.qml" line="40"/>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <location filename="../ChatView.qml" line="72"/>
        <source>Messages</source>
        <translation>Nachrichten</translation>
    </message>
    <message>
        <location filename="../ChatView.qml" line="137"/>
        <source>Jump to the latest message</source>
        <translation>Zur neuesten Nachricht springen</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <location filename="../CodeBlock.qml" line="39"/>
        <source>code</source>
        <translation>Code</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="50"/>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="50"/>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="51"/>
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="104"/>
        <source>Code: %1</source>
        <translation>Code: %1</translation>
    </message>
</context>
<context>
    <name>CompareBox</name>
    <message>
        <location filename="../CompareBox.qml" line="18"/>
        <source>Comparing…</source>
        <translation>Wird verglichen…</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="18"/>
        <source>Compare with dense</source>
        <translation>Mit dicht (dense) vergleichen</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="24"/>
        <source>Replays your last message greedily (32 tokens) through both paths.</source>
        <translation>Spielt Ihre letzte Nachricht greedy (32 Tokens) über beide Pfade erneut ab.</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="43"/>
        <source>Agreement %1 percent over %2 tokens; dense %3 tokens per second, sparse %4</source>
        <translation>Übereinstimmung %1 Prozent über %2 Tokens; dicht %3 Tokens pro Sekunde, sparse %4</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="46"/>
        <source>agreement</source>
        <translation>Übereinstimmung</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="47"/>
        <source>dense tok/s</source>
        <translation>dicht tok/s</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="48"/>
        <source>sparse tok/s</source>
        <translation>sparse tok/s</translation>
    </message>
    <message>
        <location filename="../CompareBox.qml" line="70"/>
        <source>Identical for the first %1 of %2 tokens (greedy replies diverge for good after one different token).</source>
        <translation>Identisch für die ersten %1 von %2 Tokens (greedy erzeugte Antworten laufen nach einem abweichenden Token endgültig auseinander).</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <location filename="../Composer.qml" line="60"/>
        <source>Load a model to start chatting</source>
        <translation>Laden Sie ein Modell, um zu chatten</translation>
    </message>
    <message>
        <location filename="../Composer.qml" line="59"/>
        <source>Message %1…</source>
        <translation>Nachricht an %1…</translation>
    </message>
    <message>
        <location filename="../Composer.qml" line="92"/>
        <source>Stop (Esc)</source>
        <translation>Stopp (Esc)</translation>
    </message>
    <message>
        <location filename="../Composer.qml" line="92"/>
        <source>Send (Enter)</source>
        <translation>Senden (Eingabe)</translation>
    </message>
    <message>
        <location filename="../Composer.qml" line="70"/>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <location filename="../Composer.qml" line="108"/>
        <source>Enter to send · Shift+Enter for a new line</source>
        <translation>Eingabe sendet · Umschalt+Eingabe für neue Zeile</translation>
    </message>
</context>
<context>
    <name>ConfirmDialog</name>
    <message>
        <location filename="../ConfirmDialog.qml" line="10"/>
        <source>OK</source>
        <translation>OK</translation>
    </message>
    <message>
        <location filename="../ConfirmDialog.qml" line="44"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <location filename="../ConversationDelegate.qml" line="72"/>
        <source>Conversation title</source>
        <translation>Titel der Unterhaltung</translation>
    </message>
    <message>
        <location filename="../ConversationDelegate.qml" line="104"/>
        <source>Rename</source>
        <translation>Umbenennen</translation>
    </message>
    <message>
        <location filename="../ConversationDelegate.qml" line="108"/>
        <source>Delete…</source>
        <translation>Löschen…</translation>
    </message>
    <message>
        <location filename="../ConversationDelegate.qml" line="95"/>
        <source>Conversation actions</source>
        <translation>Aktionen zur Unterhaltung</translation>
    </message>
</context>
<context>
    <name>DownloadRow</name>
    <message>
        <location filename="../DownloadRow.qml" line="47"/>
        <source>Retry</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="47"/>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="54"/>
        <source>Pause (resumes where it stopped)</source>
        <translation>Pausieren (setzt dort fort, wo es aufgehört hat)</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="61"/>
        <source>Rename the file</source>
        <translation>Die Datei umbenennen</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="61"/>
        <source>Choose the file&apos;s name</source>
        <translation>Den Dateinamen wählen</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="67"/>
        <source>Remove from the list</source>
        <translation>Aus der Liste entfernen</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="67"/>
        <source>Cancel and delete the partial file</source>
        <translation>Abbrechen und die Teildatei löschen</translation>
    </message>
    <message>
        <location filename="../DownloadRow.qml" line="77"/>
        <source>Download progress</source>
        <translation>Download-Fortschritt</translation>
    </message>
</context>
<context>
    <name>EditMessageDialog</name>
    <message>
        <location filename="../EditMessageDialog.qml" line="27"/>
        <source>Edit message</source>
        <translation>Nachricht bearbeiten</translation>
    </message>
    <message>
        <location filename="../EditMessageDialog.qml" line="51"/>
        <source>Message text</source>
        <translation>Nachrichtentext</translation>
    </message>
    <message>
        <location filename="../EditMessageDialog.qml" line="59"/>
        <source>Later messages in this conversation will be replaced by the new reply.</source>
        <translation>Spätere Nachrichten dieser Unterhaltung werden durch die neue Antwort ersetzt.</translation>
    </message>
    <message>
        <location filename="../EditMessageDialog.qml" line="72"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../EditMessageDialog.qml" line="77"/>
        <source>Save and resend</source>
        <translation>Speichern und erneut senden</translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <location filename="../EmptyState.qml" line="25"/>
        <source>How can I help?</source>
        <translation>Wie kann ich helfen?</translation>
    </message>
    <message>
        <location filename="../EmptyState.qml" line="33"/>
        <source>Chatting with %1, running locally on %2.</source>
        <translation>Chat mit %1, läuft lokal auf %2.</translation>
    </message>
    <message>
        <location filename="../EmptyState.qml" line="35"/>
        <source>Choose a model to start. Everything runs on this computer.</source>
        <translation>Wählen Sie ein Modell, um zu beginnen. Alles läuft auf diesem Computer.</translation>
    </message>
    <message>
        <location filename="../EmptyState.qml" line="50"/>
        <source>Explain sparse neural network inference in simple terms.</source>
        <translation>Erkläre sparse Inferenz in neuronalen Netzen in einfachen Worten.</translation>
    </message>
    <message>
        <location filename="../EmptyState.qml" line="51"/>
        <source>Write a Python function that checks whether a number is prime.</source>
        <translation>Schreibe eine Python-Funktion, die prüft, ob eine Zahl eine Primzahl ist.</translation>
    </message>
    <message>
        <location filename="../EmptyState.qml" line="52"/>
        <source>Give me three ideas for a weekend project.</source>
        <translation>Nenne mir drei Ideen für ein Wochenendprojekt.</translation>
    </message>
    <message>
        <location filename="../EmptyState.qml" line="53"/>
        <source>Summarise the plot of Frankenstein in four sentences.</source>
        <translation>Fasse die Handlung von Frankenstein in vier Sätzen zusammen.</translation>
    </message>
</context>
<context>
    <name>ExpertSection</name>
    <message>
        <location filename="../ExpertSection.qml" line="17"/>
        <location filename="../ExpertSection.qml" line="20"/>
        <source>Experts</source>
        <translation>Experten</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="33"/>
        <source>expert hits</source>
        <translation>Experten-Treffer</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="34"/>
        <source>CPU only</source>
        <translation>nur CPU</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="37"/>
        <source>Share of the routed experts that ran on the device (placed or in the expert cache) over the last tokens. Higher means less work waits on the CPU; raise the VRAM budget or the cache window if it is low.</source>
        <translation>Anteil der gerouteten Experten, die in den letzten Tokens auf dem Gerät liefen (platziert oder im Experten-Cache). Höher heißt: weniger Arbeit wartet auf die CPU; ist er niedrig, das VRAM-Budget oder das Cache-Fenster erhöhen.</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="38"/>
        <source>Every expert runs on the CPU: no expert sidecar, no device budget, or sparse mode is off (see the status above).</source>
        <translation>Jeder Experte läuft auf der CPU: kein Experten-Sidecar, kein Gerätebudget, oder der Sparse-Modus ist aus (siehe den Status oben).</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="39"/>
        <source>from the cache</source>
        <translation>aus dem Cache</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="42"/>
        <source>Share of the routed experts the expert cache served (recently used or prefetched by the next layers&apos; routers).</source>
        <translation>Anteil der gerouteten Experten, die der Experten-Cache lieferte (kürzlich benutzt oder von den Routern der nächsten Schichten vorab geladen).</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="43"/>
        <source>routings in window</source>
        <translation>Routings im Fenster</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="45"/>
        <source>Expert routings (tokens x layers x experts per token) the figures are over.</source>
        <translation>Experten-Routings (Tokens x Schichten x Experten je Token), über die die Werte gehen.</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="83"/>
        <source>Expert heatmap: %1 layers by %2 experts</source>
        <translation>Experten-Heatmap: %1 Schichten mal %2 Experten</translation>
    </message>
    <message>
        <location filename="../ExpertSection.qml" line="87"/>
        <source>routed share per expert · layer 0 at the top · expert 0 at the left · colour 0 → %1 (square root)</source>
        <translation>gerouteter Anteil je Experte · Schicht 0 oben · Experte 0 links · Farbe 0 → %1 (Quadratwurzel)</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <location filename="../Main.qml" line="36"/>
        <source>PowerInfer Desktop</source>
        <translation>PowerInfer Desktop</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="262"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="263"/>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="264"/>
        <source>Focus the message box</source>
        <translation>Zum Eingabefeld</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="265"/>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="266"/>
        <source>New line in the message</source>
        <translation>Neue Zeile in der Nachricht</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="267"/>
        <source>Stop the reply, cancel loading, clear the search</source>
        <translation>Antwort stoppen, Laden abbrechen, Suche leeren</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="268"/>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="269"/>
        <source>This list</source>
        <translation>Diese Liste</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="270"/>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="35"/>
        <source>%1 — PowerInfer</source>
        <translation>%1 — PowerInfer</translation>
    </message>
</context>
<context>
    <name>MetricsPanel</name>
    <message>
        <location filename="../MetricsPanel.qml" line="32"/>
        <location filename="../MetricsPanel.qml" line="93"/>
        <source>Engine metrics</source>
        <translation>Messwerte der Engine</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="102"/>
        <source>Tune the sparse engine</source>
        <translation>Sparse-Engine abstimmen</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="108"/>
        <source>Close the metrics panel</source>
        <translation>Messwerte schließen</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="138"/>
        <source>Remote server</source>
        <translation>Entfernter Server</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="139"/>
        <source>Mixture of experts</source>
        <translation>Mixture of Experts</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="141"/>
        <source>Dense mode (sparse switched off)</source>
        <translation>Dichter Modus (sparse ausgeschaltet)</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="141"/>
        <source>Running dense</source>
        <translation>Läuft dicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="152"/>
        <source> — Calibrate… creates one from here.</source>
        <translation> — „Kalibrieren…“ erstellt hier eines.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="161"/>
        <source>Calibrate…</source>
        <translation>Kalibrieren…</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="173"/>
        <source>decode tok/s</source>
        <translation>Decode tok/s</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="175"/>
        <source>Tokens of the reply generated per second. Reading speed is about 5-10; higher is better.</source>
        <translation>Pro Sekunde erzeugte Token der Antwort. Lesegeschwindigkeit liegt bei etwa 5–10; höher ist besser.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="178"/>
        <source>prompt tok/s</source>
        <translation>Prompt tok/s</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="181"/>
        <source>Prompt tokens read per second before the reply starts. Usually several times the decode speed; higher is better.</source>
        <translation>Pro Sekunde gelesene Prompt-Token, bevor die Antwort beginnt. Meist ein Mehrfaches der Dekodiergeschwindigkeit; höher ist besser.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="189"/>
        <source>hot-neuron hits (no split)</source>
        <translation>Treffer heißer Neuronen (keine Aufteilung)</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="190"/>
        <source>hot-neuron hits</source>
        <translation>Hot-Neuron-Treffer</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="192"/>
        <source>n/a</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="194"/>
        <source>Every active neuron ran where it is stored: without a GPU nothing is cold, so the hit rate would read 100 % at any threshold and tells nothing.</source>
        <translation>Jedes aktive Neuron lief dort, wo es gespeichert ist: ohne GPU ist nichts kalt, die Trefferquote läge bei jeder Schwelle bei 100 % und sagt nichts aus.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="195"/>
        <source>Share of the active neurons already on the device (hot or cached). Near 100 % means little waits on the CPU; below 80 % try a higher hot-neuron threshold.</source>
        <translation>Anteil der aktiven Neuronen, die schon auf dem Gerät liegen (heiß oder im Cache). Nahe 100 % wartet wenig auf die CPU; unter 80 % eine höhere Schwelle für heiße Neuronen versuchen.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="198"/>
        <source>FFN sparsity</source>
        <translation>FFN-Sparsity</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="200"/>
        <source>Share of the FFN neurons skipped per token. Higher saves more work; the quality stays close to dense up to the calibrated level (about 50 %).</source>
        <translation>Anteil der je Token übersprungenen FFN-Neuronen. Höher spart mehr Arbeit; bis zur kalibrierten Stufe (etwa 50 %) bleibt die Qualität nahe an dicht.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="204"/>
        <source>weights read</source>
        <translation>gelesene Gewichte</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="210"/>
        <location filename="../MetricsPanel.qml" line="251"/>
        <source>predictor recall</source>
        <translation>Prädiktor-Recall</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="212"/>
        <source>Share of the truly active neurons the predictor found (sampled against dense). Above 90 % keeps replies close to dense; – when not sampled.</source>
        <translation>Anteil der tatsächlich aktiven Neuronen, die der Prädiktor fand (stichprobenartig gegen dicht geprüft). Über 90 % bleiben Antworten nahe an dicht; – ohne Stichprobe.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="215"/>
        <source>ms / token</source>
        <translation>ms / Token</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="217"/>
        <source>Wall time per generated token, all of it (1000 / decode tok/s). Lower is better; the bar below splits it.</source>
        <translation>Gesamte Zeit je erzeugtem Token (1000 / Dekodier-Token/s). Niedriger ist besser; der Balken darunter teilt sie auf.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="231"/>
        <source>Hit rate, last %1 tokens</source>
        <translation>Trefferquote, letzte %1 Tokens</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="244"/>
        <source>Hot-neuron hit rate over the last tokens</source>
        <translation>Hot-Neuron-Trefferquote über die letzten Tokens</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="250"/>
        <source>hit rate</source>
        <translation>Trefferquote</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="274"/>
        <source>Active per layer</source>
        <translation>Aktiv je Schicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="275"/>
        <source>Hits per layer</source>
        <translation>Treffer je Schicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="281"/>
        <source>Active</source>
        <translation>Aktiv</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="281"/>
        <source>Hit rate</source>
        <translation>Trefferquote</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="282"/>
        <source>Heatmap value</source>
        <translation>Heatmap-Wert</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="299"/>
        <source>Per-layer heatmap: %1 layers by the last %2 tokens</source>
        <translation>Heatmap je Schicht: %1 Schichten über die letzten %2 Tokens</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="304"/>
        <source>layer 0 at the top · newest token at the right · colour %1 → %2</source>
        <translation>Schicht 0 oben · neuestes Token rechts · Farbe %1 → %2</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="313"/>
        <source>Time per token</source>
        <translation>Zeit pro Token</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="320"/>
        <source>%1 ms per token</source>
        <translation>%1 ms pro Token</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="326"/>
        <source>device FFN</source>
        <translation>FFN auf dem Gerät</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="327"/>
        <source>CPU FFN</source>
        <translation>FFN auf der CPU</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="328"/>
        <source>other</source>
        <translation>Sonstiges</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="331"/>
        <source>Where a token&apos;s time goes: predictors, the FFN&apos;s hot part on the device and its cold part on the CPU, and everything else (attention, norms, output head, sampling).</source>
        <translation>Wohin die Zeit eines Tokens geht: Prädiktoren, der heiße Teil des FFN auf dem Gerät, sein kalter Teil auf der CPU und alles andere (Attention, Normen, Ausgabekopf, Sampling).</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="325"/>
        <source>predictor</source>
        <translation>Prädiktor</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="207"/>
        <source>Weight bytes read per token against dense: the output head reads a small preview and its likeliest rows, the FFN skips the neurons that stay quiet (v3: the inputs that barely count, in every matrix). Lower reads less memory; – when not measured.</source>
        <translation>Pro Token gelesene Gewichtsbytes im Vergleich zu dicht: Der Ausgabekopf liest eine kleine Vorschau und seine wahrscheinlichsten Zeilen, das FFN überspringt die Neuronen, die still bleiben (v3: die Eingaben, die kaum zählen, in jeder Matrix). Weniger liest weniger Speicher; – wenn nicht gemessen.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="338"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="346"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="350"/>
        <source>dense</source>
        <translation>dicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="351"/>
        <source>hot</source>
        <translation>hot</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="351"/>
        <source>placed experts</source>
        <translation>platzierte Experten</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="353"/>
        <source>cache</source>
        <translation>Cache</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="353"/>
        <source>expert cache</source>
        <translation>Experten-Cache</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="355"/>
        <source>KV</source>
        <translation>KV</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="356"/>
        <source>predictors</source>
        <translation>Prädiktoren</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="363"/>
        <source>RAM</source>
        <translation>RAM</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="364"/>
        <source>The simulated device&apos;s parts live in RAM too.</source>
        <translation>Die Teile des simulierten Geräts liegen ebenfalls im RAM.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="367"/>
        <source>model weights</source>
        <translation>Modellgewichte</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="368"/>
        <source>device (simulated)</source>
        <translation>Gerät (simuliert)</translation>
    </message>
</context>
<context>
    <name>ModelBanner</name>
    <message>
        <location filename="../ModelBanner.qml" line="39"/>
        <source>Loading %1… %2%</source>
        <translation>%1 wird geladen… %2 %</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="42"/>
        <source>Could not load the model: %1</source>
        <translation>Das Modell konnte nicht geladen werden: %1</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="45"/>
        <source>No model loaded. Choose a GGUF model to start chatting.</source>
        <translation>Kein Modell geladen. Wählen Sie ein GGUF-Modell, um zu chatten.</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="46"/>
        <source>No model yet. Get one from the catalog (it says which fit this computer), or open a GGUF file.</source>
        <translation>Noch kein Modell. Hol eines aus dem Katalog (er sagt, welche auf diesen Rechner passen), oder öffne eine GGUF-Datei.</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="55"/>
        <source>Model loading progress</source>
        <translation>Ladefortschritt des Modells</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="74"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="80"/>
        <source>Get a model…</source>
        <translation>Modell holen…</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="85"/>
        <source>Choose model</source>
        <translation>Modell wählen</translation>
    </message>
</context>
<context>
    <name>ModelDelegate</name>
    <message>
        <location filename="../ModelDelegate.qml" line="21"/>
        <source>calibrated</source>
        <translation>kalibriert</translation>
    </message>
    <message>
        <location filename="../ModelDelegate.qml" line="21"/>
        <location filename="../ModelDelegate.qml" line="89"/>
        <source>not calibrated</source>
        <translation>nicht kalibriert</translation>
    </message>
    <message>
        <location filename="../ModelDelegate.qml" line="28"/>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <location filename="../ModelDelegate.qml" line="90"/>
        <source>Calibrate</source>
        <translation>Kalibrieren</translation>
    </message>
    <message>
        <location filename="../ModelDelegate.qml" line="91"/>
        <source>Make its sparse sidecar in the background; the model stays usable meanwhile</source>
        <translation>Erstellt sein Sparse-Sidecar im Hintergrund; das Modell bleibt währenddessen nutzbar</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <location filename="../ModelPicker.qml" line="20"/>
        <source>Choose a model</source>
        <translation>Modell wählen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="66"/>
        <source>Choose the models folder</source>
        <translation>Modellordner wählen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="71"/>
        <source>Scan the folder again</source>
        <translation>Ordner erneut durchsuchen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="113"/>
        <source>Looking for models…</source>
        <translation>Modelle werden gesucht…</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="114"/>
        <source>No .gguf models in this folder. Get one from the catalog, open a file, or drop a .gguf onto the window.</source>
        <translation>Keine .gguf-Modelle in diesem Ordner. Hol eines aus dem Katalog, öffne eine Datei oder zieh eine .gguf-Datei auf das Fenster.</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="132"/>
        <source>Get models…</source>
        <translation>Modelle holen…</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="122"/>
        <source>Open file…</source>
        <translation>Datei öffnen…</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="40"/>
        <location filename="../ModelPicker.qml" line="143"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="53"/>
        <source>Folder</source>
        <translation>Ordner</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../../app/conversation_list_model.cpp" line="16"/>
        <source>Yesterday</source>
        <translation>Gestern</translation>
    </message>
    <message>
        <location filename="../../app/model_catalog.cpp" line="34"/>
        <source>File not found</source>
        <translation>Datei nicht gefunden</translation>
    </message>
    <message>
        <location filename="../../app/api_key_store.cpp" line="20"/>
        <source>The OS keychain is not available (%1): the API key is used for this session only and is not stored anywhere.</source>
        <translation>Der Schlüsselbund des Systems ist nicht verfügbar (%1): Der API-Schlüssel gilt nur für diese Sitzung und wird nirgends gespeichert.</translation>
    </message>
    <message>
        <location filename="../../app/api_key_store.cpp" line="83"/>
        <source>This build has no OS keychain support (QtKeychain): the API key is used for this session only and is not stored anywhere.</source>
        <translation>Diese Version unterstützt den Schlüsselbund des Systems nicht (QtKeychain): Der API-Schlüssel gilt nur für diese Sitzung und wird nirgends gespeichert.</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="123"/>
        <source>Calibration was cancelled.</source>
        <translation>Die Kalibrierung wurde abgebrochen.</translation>
    </message>
    <message>
        <location filename="../../app/conversation_export.cpp" line="125"/>
        <source>not JSON (%1 at byte %2)</source>
        <translation>kein JSON (%1 bei Byte %2)</translation>
    </message>
    <message>
        <location filename="../../app/conversation_export.cpp" line="133"/>
        <source>not a PowerInfer conversation export (expected &quot;messages&quot; with user and assistant turns)</source>
        <translation>kein PowerInfer-Export von Unterhaltungen (erwartet: „messages“ mit Beiträgen von Nutzer und Assistent)</translation>
    </message>
    <message>
        <location filename="../../app/conversation_export.cpp" line="138"/>
        <source>the file holds no conversations</source>
        <translation>die Datei enthält keine Unterhaltungen</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="42"/>
        <source>, link not tested</source>
        <translation>, Link nicht geprüft</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="44"/>
        <source>Size and SHA-256 checked</source>
        <translation>Größe und SHA-256 geprüft</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="45"/>
        <source>exact size</source>
        <translation>genaue Größe</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="45"/>
        <source>size approximate</source>
        <translation>Größe ungefähr</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="46"/>
        <source>SHA-256 in the catalog</source>
        <translation>SHA-256 im Katalog</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="47"/>
        <source>SHA-256 from the server at download</source>
        <translation>SHA-256 beim Download vom Server</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="48"/>
        <source>Unverified entry: %1, %2</source>
        <translation>Ungeprüfter Eintrag: %1, %2</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="61"/>
        <source>The catalog is not valid JSON (%1 at offset %2).</source>
        <translation>Der Katalog ist kein gültiges JSON (%1 an Position %2).</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="68"/>
        <source>The catalog has version %1; this app reads version %2.</source>
        <translation>Der Katalog hat Version %1; diese App liest Version %2.</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="117"/>
        <source>Catalog entry &quot;%1&quot; skipped: %2 missing or wrong.</source>
        <translation>Katalogeintrag „%1“ übersprungen: %2 fehlt oder ist falsch.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="42"/>
        <source>Access denied (HTTP %1) by %2: the file needs a login or accepting its licence on the website first (gated models on Hugging Face do).</source>
        <translation>Zugriff verweigert (HTTP %1) von %2: Die Datei verlangt eine Anmeldung oder zuerst die Zustimmung zu ihrer Lizenz auf der Website (so bei zugangsbeschränkten Modellen auf Hugging Face).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="49"/>
        <source>Not found (HTTP %1): %2 points to no file. Check the address (on Hugging Face use the /resolve/ link of the file).</source>
        <translation>Nicht gefunden (HTTP %1): %2 zeigt auf keine Datei. Prüfe die Adresse (auf Hugging Face den /resolve/-Link der Datei verwenden).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="55"/>
        <source>%1 limits how often it may be asked (HTTP 429): try again in a few minutes.</source>
        <translation>%1 begrenzt, wie oft angefragt werden darf (HTTP 429): In ein paar Minuten erneut versuchen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="63"/>
        <source>The server %1 failed (HTTP %2): try again later.</source>
        <translation>Der Server %1 hatte einen Fehler (HTTP %2): Später erneut versuchen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="66"/>
        <source>The server %1 answered HTTP %2 instead of the file.</source>
        <translation>Der Server %1 antwortete mit HTTP %2 statt mit der Datei.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="91"/>
        <source>Cannot find the server %1: check the address and the internet connection.</source>
        <translation>Der Server %1 wurde nicht gefunden: Adresse und Internetverbindung prüfen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="96"/>
        <source>The server %1 refused the connection: check the address and port, or try again later.</source>
        <translation>Der Server %1 hat die Verbindung abgelehnt: Adresse und Port prüfen oder später erneut versuchen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="102"/>
        <source>The secure connection to %1 failed (%2): its certificate was not accepted. Check the system date and the installed CA certificates (Debian: ca-certificates).</source>
        <translation>Die sichere Verbindung zu %1 ist fehlgeschlagen (%2): Sein Zertifikat wurde nicht akzeptiert. Systemdatum und installierte CA-Zertifikate prüfen (Debian: ca-certificates).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="108"/>
        <source>The connection to %1 dropped before the file was complete.</source>
        <translation>Die Verbindung zu %1 brach ab, bevor die Datei vollständig war.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="112"/>
        <source>The server %1 stopped sending data.</source>
        <translation>Der Server %1 hat aufgehört, Daten zu senden.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="114"/>
        <source>Downloading from %1 failed: %2</source>
        <translation>Download von %1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="163"/>
        <source>Queued</source>
        <translation>In der Warteschlange</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="165"/>
        <source>Downloading</source>
        <translation>Wird heruntergeladen</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="167"/>
        <source>Paused</source>
        <translation>Pausiert</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="169"/>
        <source>Verifying</source>
        <translation>Wird geprüft</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="171"/>
        <source>Verified</source>
        <translation>Geprüft</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="173"/>
        <source>Failed</source>
        <translation>Fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="181"/>
        <source>%1 s left</source>
        <translation>noch %1 s</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="182"/>
        <source>%1 min %2 s left</source>
        <translation>noch %1 min %2 s</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="183"/>
        <source>%1 h %2 min left</source>
        <translation>noch %1 h %2 min</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="252"/>
        <source>This is not a web address: paste an https:// link to a .gguf file.</source>
        <translation>Das ist keine Webadresse: Einen https://-Link zu einer .gguf-Datei einfügen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="255"/>
        <source>Only https:// downloads are allowed (plain http only from this computer): a model fetched over http could be altered on the way.</source>
        <translation>Nur https://-Downloads sind erlaubt (einfaches http nur von diesem Rechner): Ein über http geladenes Modell könnte unterwegs verändert werden.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="259"/>
        <source>Only https:// links can be downloaded (this one is %1:).</source>
        <translation>Nur https://-Links können heruntergeladen werden (dieser ist %1:).</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="20"/>
        <source> Check the API key in the remote server settings.</source>
        <translation> Den API-Schlüssel in den Einstellungen des entfernten Servers prüfen.</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="22"/>
        <source> Check the server address and the model id.</source>
        <translation> Serveradresse und Modell-ID prüfen.</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="23"/>
        <source>The server %1 answered HTTP %2: %3%4</source>
        <translation>Der Server %1 antwortete mit HTTP %2: %3%4</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="26"/>
        <source>(no message)</source>
        <translation>(keine Meldung)</translation>
    </message>
    <message>
        <location filename="../../app/remote_engine.cpp" line="72"/>
        <source>The server %1 has no model &quot;%2&quot;; it has: %3.</source>
        <translation>Der Server %1 hat kein Modell „%2“; er hat: %3.</translation>
    </message>
    <message>
        <location filename="../../app/remote_engine.cpp" line="85"/>
        <source>remote: %1</source>
        <translation>entfernt: %1</translation>
    </message>
    <message>
        <location filename="../../app/remote_engine.cpp" line="87"/>
        <source>remote server: it streams text only, so hot-neuron hits, sparsity, the time split, per-layer activity and device memory are not available here; tokens/s is measured from the stream</source>
        <translation>entfernter Server: Er streamt nur Text, daher sind Treffer heißer Neuronen, Sparsity, Zeitaufteilung, Aktivität je Schicht und Gerätespeicher hier nicht verfügbar; Token/s werden am Stream gemessen</translation>
    </message>
</context>
<context>
    <name>RemoteServerSection</name>
    <message>
        <location filename="../RemoteServerSection.qml" line="19"/>
        <source>Chat through a server on another machine instead of a local model. Conversations are stored here as usual.</source>
        <translation>Über einen Server auf einem anderen Rechner chatten statt mit einem lokalen Modell. Unterhaltungen werden wie gewohnt hier gespeichert.</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="29"/>
        <source>http://192.168.1.20:8080/v1</source>
        <translation>http://192.168.1.20:8080/v1</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="32"/>
        <source>Server address</source>
        <translation>Serveradresse</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="37"/>
        <source>API key (optional; kept in the OS keychain)</source>
        <translation>API-Schlüssel (optional; im Schlüsselbund des Systems verwahrt)</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="41"/>
        <source>Remote API key</source>
        <translation>API-Schlüssel des entfernten Servers</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="64"/>
        <source>model: the server&apos;s first</source>
        <translation>Modell: das erste des Servers</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="65"/>
        <source>Remote model</source>
        <translation>Entferntes Modell</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="68"/>
        <source>List models</source>
        <translation>Modelle auflisten</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="75"/>
        <source>Reconnect</source>
        <translation>Neu verbinden</translation>
    </message>
    <message>
        <location filename="../RemoteServerSection.qml" line="75"/>
        <source>Connect</source>
        <translation>Verbinden</translation>
    </message>
</context>
<context>
    <name>RenameDownloadDialog</name>
    <message>
        <location filename="../RenameDownloadDialog.qml" line="45"/>
        <source>File name</source>
        <translation>Dateiname</translation>
    </message>
    <message>
        <location filename="../RenameDownloadDialog.qml" line="66"/>
        <source>File name in the models folder</source>
        <translation>Dateiname im Modellordner</translation>
    </message>
    <message>
        <location filename="../RenameDownloadDialog.qml" line="86"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../RenameDownloadDialog.qml" line="92"/>
        <source>Rename</source>
        <translation>Umbenennen</translation>
    </message>
</context>
<context>
    <name>SettingsDrawer</name>
    <message>
        <location filename="../SettingsDrawer.qml" line="97"/>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="105"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="111"/>
        <location filename="../SettingsDrawer.qml" line="122"/>
        <source>System prompt</source>
        <translation>Systemanweisung</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="118"/>
        <source>For this conversation, e.g. “You are a concise assistant.”</source>
        <translation>Für diese Unterhaltung, z. B. „Du bist ein knapper Assistent.“</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="132"/>
        <source>Sampling</source>
        <translation>Sampling</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="135"/>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="143"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="153"/>
        <location filename="../SettingsDrawer.qml" line="162"/>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="169"/>
        <location filename="../SettingsDrawer.qml" line="179"/>
        <source>Max tokens</source>
        <translation>Max. Tokens</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="185"/>
        <source>Repeat penalty</source>
        <translation>Wiederholungsstrafe</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="192"/>
        <source>Above 1.0 makes recently used tokens less likely (1.1 is a common choice; 1.0 = off).</source>
        <translation>Über 1,0 macht kürzlich verwendete Token unwahrscheinlicher (1,1 ist üblich; 1,0 = aus).</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="198"/>
        <source>Reset to defaults</source>
        <translation>Auf Standardwerte zurücksetzen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="203"/>
        <source>Context</source>
        <translation>Kontext</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="208"/>
        <source>Context length (tokens)</source>
        <translation>Kontextlänge (Token)</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="222"/>
        <source>Context length</source>
        <translation>Kontextlänge</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="230"/>
        <source>Longer conversations keep their newest turns; the chat says when older ones were left out.</source>
        <translation>Längere Unterhaltungen behalten ihre neuesten Beiträge; der Chat sagt, wenn ältere weggelassen wurden.</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="239"/>
        <source>Reload the model with this context</source>
        <translation>Modell mit diesem Kontext neu laden</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="244"/>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="263"/>
        <source>Follow the system</source>
        <translation>Wie das System</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="264"/>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="265"/>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="267"/>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="305"/>
        <location filename="../SettingsDrawer.qml" line="318"/>
        <source>Local API server</source>
        <translation>Lokaler API-Server</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="310"/>
        <source>Serve the loaded model to other programs on this computer (OpenAI-compatible)</source>
        <translation>Das geladene Modell anderen Programmen auf diesem Computer bereitstellen (OpenAI-kompatibel)</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="325"/>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="336"/>
        <source>API server port</source>
        <translation>Port des API-Servers</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="343"/>
        <location filename="../SettingsDrawer.qml" line="353"/>
        <source>API key</source>
        <translation>API-Schlüssel</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="350"/>
        <source>none: any program on this computer may call it</source>
        <translation>keiner: jedes Programm auf diesem Rechner darf ihn aufrufen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="370"/>
        <source>API server address</source>
        <translation>Adresse des API-Servers</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="370"/>
        <source>API server error</source>
        <translation>Fehler des API-Servers</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="375"/>
        <source>Copy the address</source>
        <translation>Adresse kopieren</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="380"/>
        <source>Remote server</source>
        <translation>Entfernter Server</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <location filename="../ShortcutsDialog.qml" line="18"/>
        <source>Keyboard shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <location filename="../ShortcutsDialog.qml" line="57"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <location filename="../Sidebar.qml" line="58"/>
        <location filename="../Sidebar.qml" line="59"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="96"/>
        <location filename="../Sidebar.qml" line="97"/>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="126"/>
        <source>Recent</source>
        <translation>Zuletzt</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="126"/>
        <source>Results</source>
        <translation>Ergebnisse</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="160"/>
        <source>No conversation matches.</source>
        <translation>Keine passende Unterhaltung.</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="161"/>
        <source>Your conversations will appear here.</source>
        <translation>Ihre Unterhaltungen erscheinen hier.</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="173"/>
        <source>Delete “%1”? Its messages cannot be recovered.</source>
        <translation>„%1“ löschen? Die Nachrichten lassen sich nicht wiederherstellen.</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="177"/>
        <source>Delete conversation</source>
        <translation>Unterhaltung löschen</translation>
    </message>
    <message>
        <location filename="../Sidebar.qml" line="178"/>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
</context>
<context>
    <name>StackedBar</name>
    <message>
        <location filename="../StackedBar.qml" line="32"/>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
</context>
<context>
    <name>StatusBar</name>
    <message>
        <location filename="../StatusBar.qml" line="38"/>
        <source>No model</source>
        <translation>Kein Modell</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="40"/>
        <source>Model: %1</source>
        <translation>Modell: %1</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="53"/>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="55"/>
        <source>estimated up to %1</source>
        <translation>geschätzt bis zu %1</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="56"/>
        <source>estimated about %1</source>
        <translation>geschätzt etwa %1</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="57"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="60"/>
        <source>Speed: %1</source>
        <translation>Geschwindigkeit: %1</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="65"/>
        <source>Context %1 / %2</source>
        <translation>Kontext %1 / %2</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="73"/>
        <source>Device: %1</source>
        <translation>Gerät: %1</translation>
    </message>
</context>
<context>
    <name>TuningPanel</name>
    <message>
        <location filename="../TuningPanel.qml" line="93"/>
        <source>Default %1.</source>
        <translation>Standard: %1.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="115"/>
        <source>Sparse engine tuning</source>
        <translation>Feinabstimmung der Sparse-Engine</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="123"/>
        <source>Close tuning</source>
        <translation>Feinabstimmung schließen</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="128"/>
        <source>Changes apply before the next token, even mid-reply.</source>
        <translation>Änderungen gelten ab dem nächsten Token, auch mitten in einer Antwort.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="137"/>
        <location filename="../TuningPanel.qml" line="146"/>
        <source>Sparse inference</source>
        <translation>Sparse Inferenz</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="152"/>
        <source>Off = dense, the exact reference path.</source>
        <translation>Aus = dicht, der exakte Referenzpfad.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="153"/>
        <source>This model has no sidecar yet, so it runs dense.</source>
        <translation>Dieses Modell hat noch kein Sidecar und läuft daher dicht.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="162"/>
        <source>Calibrate…</source>
        <translation>Kalibrieren…</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="169"/>
        <source>Hot-neuron threshold</source>
        <translation>Hot-Neuron-Schwelle</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="170"/>
        <source>Share of each layer&apos;s activation mass kept on the device.</source>
        <translation>Anteil der Aktivierungsmasse jeder Schicht, der auf dem Gerät gehalten wird.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="178"/>
        <source>Predictor threshold</source>
        <translation>Prädiktor-Schwelle</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="179"/>
        <source>Probability above which a neuron is computed; lower = safer, slower.</source>
        <translation>Wahrscheinlichkeit, ab der ein Neuron berechnet wird; niedriger = sicherer, langsamer.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="186"/>
        <source>Activation sparsity (CPU)</source>
        <translation>Aktivierungs-Sparsity (CPU)</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="51"/>
        <source>No effect on this machine: no GPU holds neurons.</source>
        <translation>Auf diesem Rechner ohne Wirkung: keine GPU hält Neuronen.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="50"/>
        <source>No effect until the model is calibrated: it runs dense.</source>
        <translation>Keine Wirkung, bis das Modell kalibriert ist: Es läuft dicht.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="187"/>
        <source>Share of FFN neurons skipped per token by exact activity on the CPU; -1 = the sidecar&apos;s default: the fastest level within the perplexity bound, timed on this machine when it calibrated. Higher skips more and is less exact; whether it is faster depends on the CPU (0 runs the dense FFN).</source>
        <translation>Anteil der FFN-Neuronen, die pro Token nach exakter Aktivität auf der CPU übersprungen werden; -1 = die Vorgabe der Sidecar-Datei: die schnellste Stufe innerhalb der Perplexitätsgrenze, bei der Kalibrierung auf diesem Rechner gemessen. Höher überspringt mehr und ist weniger exakt; ob es schneller ist, hängt von der CPU ab (0 rechnet das dichte FFN).</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="236"/>
        <source>Recommended: %1 (perplexity %2).</source>
        <translation>Empfohlen: %1 (Perplexität %2).</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="238"/>
        <source>No level stays within the bound: dense is recommended.</source>
        <translation>Keine Stufe bleibt innerhalb der Grenze: dicht (dense) wird empfohlen.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="242"/>
        <source>Default: %1, the fastest within it when calibrating (%2x dense).</source>
        <translation>Vorgabe: %1, die schnellste innerhalb der Grenze bei der Kalibrierung (%2x dicht).</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="247"/>
        <source>Now %1: perplexity %2, KL %3, top-1 %4.</source>
        <translation>Jetzt %1: Perplexität %2, KL %3, Top-1 %4.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="252"/>
        <source>Measured sparsity curve</source>
        <translation>Gemessene Sparsity-Kurve</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="260"/>
        <source>Measured after calibration</source>
        <translation>Nach der Kalibrierung gemessen</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="410"/>
        <source>perplexity rise vs delivered sparsity</source>
        <translation>Anstieg der Perplexität über der erreichten Sparsity</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="411"/>
        <source>bound +%1 %</source>
        <translation>Grenze +%1 %</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="412"/>
        <source>current</source>
        <translation>aktuell</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="413"/>
        <source>decode speed vs dense (right axis)</source>
        <translation>Decode-Geschwindigkeit gegenüber dicht (rechte Achse)</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="425"/>
        <source>Hollow squares: decode timed when calibrating; “Compare with dense” below measures the current level (filled).</source>
        <translation>Hohle Quadrate: Decode-Geschwindigkeit bei der Kalibrierung gemessen; „Mit dicht (dense) vergleichen“ unten misst die aktuelle Stufe (gefüllt).</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="427"/>
        <source>Speed: “Compare with dense” below measures it at the current level.</source>
        <translation>Geschwindigkeit: „Mit dicht (dense) vergleichen“ unten misst sie auf der aktuellen Stufe.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="438"/>
        <source>No GPU holds neurons: the hot-neuron threshold, prefetch depth and cache window have no effect; the CPU computes what is active exactly.</source>
        <translation>Keine GPU hält Neuronen: Schwelle für heiße Neuronen, Prefetch-Tiefe und Cache-Fenster wirken nicht; die CPU berechnet das Aktive exakt.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="447"/>
        <source>Prefetch depth</source>
        <translation>Prefetch-Tiefe</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="448"/>
        <source>Layers ahead whose predicted cold neurons are staged.</source>
        <translation>Anzahl der vorausliegenden Schichten, deren vorhergesagte kalte Neuronen bereitgestellt werden.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="456"/>
        <source>Cache window</source>
        <translation>Cache-Fenster</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="457"/>
        <source>Tokens a cold neuron stays cached on the device after firing.</source>
        <translation>Tokens, die ein kaltes Neuron nach dem Feuern im Gerätecache bleibt.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="465"/>
        <source>Device budget (MiB)</source>
        <translation>Gerätebudget (MiB)</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="478"/>
        <location filename="../TuningPanel.qml" line="479"/>
        <source>auto</source>
        <translation>auto</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="478"/>
        <location filename="../TuningPanel.qml" line="479"/>
        <source>none</source>
        <translation>keins</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="480"/>
        <source>Device memory budget in MiB</source>
        <translation>Gerätespeicher-Budget in MiB</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="485"/>
        <source>What the placement may use on the device: auto = free memory minus 512 MiB, none = everything on the CPU.</source>
        <translation>Was die Platzierung auf dem Gerät belegen darf: auto = freier Speicher minus 512 MiB, keins = alles auf der CPU.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="507"/>
        <source>Placement preview</source>
        <translation>Vorschau der Platzierung</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="515"/>
        <source>%L1 of %L2 neurons hot · %3 MiB on the device%4</source>
        <translation>%L1 von %L2 Neuronen hot · %3 MiB auf dem Gerät%4</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="518"/>
        <source> (budget-limited)</source>
        <translation> (durch Budget begrenzt)</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="520"/>
        <source>No preview yet.</source>
        <translation>Noch keine Vorschau.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="529"/>
        <source>Saved in %1</source>
        <translation>Gespeichert in %1</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="538"/>
        <source>Reset to defaults</source>
        <translation>Auf Standardwerte zurücksetzen</translation>
    </message>
</context>
<context>
    <name>TypingIndicator</name>
    <message>
        <location filename="../TypingIndicator.qml" line="7"/>
        <source>The assistant is thinking</source>
        <translation>Der Assistent denkt nach</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../../app/desktop_app.cpp" line="101"/>
        <source>Chat with local language models using sparse hybrid GPU/CPU inference.</source>
        <translation>Chatten Sie mit lokalen Sprachmodellen über sparse hybride GPU/CPU-Inferenz.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="107"/>
        <source>Folder for conversations and settings.</source>
        <translation>Ordner für Unterhaltungen und Einstellungen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="110"/>
        <source>GGUF model to load at start.</source>
        <translation>GGUF-Modell, das beim Start geladen wird.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="112"/>
        <source>Send this prompt in a new conversation.</source>
        <translation>Diesen Prompt in einer neuen Unterhaltung senden.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="115"/>
        <source>Save a window screenshot after the reply.</source>
        <translation>Nach der Antwort ein Bildschirmfoto des Fensters speichern.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="118"/>
        <source>Exit once the reply is complete.</source>
        <translation>Beenden, sobald die Antwort vollständig ist.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="120"/>
        <source>Colour theme: system, light or dark.</source>
        <translation>Farbschema: system, light oder dark.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="123"/>
        <source>Sparse engine of a calibrated model: v2 (FFN neurons, the default) or v3 (input sparsity on every matrix, opt-in).</source>
        <translation>Sparse-Engine eines kalibrierten Modells: v2 (FFN-Neuronen, die Vorgabe) oder v3 (Eingabe-Sparsität auf jeder Matrix, auf Wunsch).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="129"/>
        <source>Set a sparse-engine knob after loading (repeatable), e.g. hot_neuron_threshold=0.7; saved in the model&apos;s config.json.</source>
        <translation>Nach dem Laden einen Regler der Sparse-Engine setzen (wiederholbar), z. B. hot_neuron_threshold=0.7; wird in der config.json des Modells gespeichert.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="134"/>
        <source>Show the metrics panel.</source>
        <translation>Die Messwerte-Leiste anzeigen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="136"/>
        <source>Open the chat settings.</source>
        <translation>Die Chat-Einstellungen öffnen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="138"/>
        <source>Open the tuning panel.</source>
        <translation>Die Feinabstimmung öffnen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="141"/>
        <source>Take the --screenshot mid-reply, after N tokens.</source>
        <translation>Das --screenshot-Bild mitten in der Antwort aufnehmen, nach N Tokens.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="144"/>
        <source>Calibrate the --model first (writes its sidecar): on the bundled text, your conversations, or a text file.</source>
        <translation>Das --model zuerst kalibrieren (schreibt sein Sidecar): mit dem mitgelieferten Text, Ihren Unterhaltungen oder einer Textdatei.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="150"/>
        <source>Corpus tokens for --calibrate (default 20000).</source>
        <translation>Korpus-Tokens für --calibrate (Standard 20000).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="153"/>
        <source>After the reply, replay the prompt through the dense and the sparse path and print the token agreement and speeds.</source>
        <translation>Nach der Antwort den Prompt über den dichten und den sparse Pfad erneut abspielen und Token-Übereinstimmung und Geschwindigkeiten ausgeben.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="157"/>
        <source>Initial window size, e.g. 800x600.</source>
        <translation>Anfängliche Fenstergröße, z. B. 800x600.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="161"/>
        <source>Download a .gguf into the models folder without a window (resumes an unfinished one), verify it, and exit.</source>
        <translation>Eine .gguf-Datei ohne Fenster in den Modellordner herunterladen (setzt einen unfertigen Download fort), prüfen und beenden.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="166"/>
        <source>Expected SHA-256 of the --download.</source>
        <translation>Erwartete SHA-256 des --download.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="169"/>
        <source>Models folder for --download (default: the app&apos;s).</source>
        <translation>Modellordner für --download (Standard: der der App).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="173"/>
        <source>Chat with --prompt through an OpenAI-compatible server at this URL, without a window; the reply goes to stdout.</source>
        <translation>Mit --prompt über einen OpenAI-kompatiblen Server unter dieser URL chatten, ohne Fenster; die Antwort geht nach stdout.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="178"/>
        <source>API key for --remote.</source>
        <translation>API-Schlüssel für --remote.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="181"/>
        <source>Model id for --remote (default: the server&apos;s first).</source>
        <translation>Modell-ID für --remote (Standard: das erste des Servers).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="184"/>
        <source>Reply length limit for --remote.</source>
        <translation>Längenbegrenzung der Antwort für --remote.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="187"/>
        <source>Press Stop this long into the --remote reply.</source>
        <translation>Nach dieser Zeit in der --remote-Antwort auf Stopp drücken.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="189"/>
        <source>Open the model catalog (Get a model).</source>
        <translation>Den Modellkatalog öffnen (Modell holen).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="192"/>
        <source>Start downloading this catalog entry (its id).</source>
        <translation>Den Download dieses Katalogeintrags starten (seine ID).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="195"/>
        <source>Smoke mode: wait until the downloads end before the screenshot (exit 1 if one failed).</source>
        <translation>Smoke-Modus: Vor dem Screenshot warten, bis die Downloads enden (Exit-Code 1, wenn einer fehlschlug).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="200"/>
        <source>Smoke mode: type this key sequence into the window after the reply (e.g. Ctrl+Q), then fail unless the app quits.</source>
        <translation>Smoke-Modus: diese Tastenfolge nach der Antwort in das Fenster tippen (z. B. Strg+Q), dann fehlschlagen, wenn die App sich nicht beendet.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="206"/>
        <source>Smoke mode: wait this long before the screenshot.</source>
        <translation>Smoke-Modus: So lange vor dem Screenshot warten.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="209"/>
        <source>Smoke mode: calibrate the model in the background (bundled text) while the --prompt is answered, then wait for it.</source>
        <translation>Smoke-Modus: Das Modell im Hintergrund kalibrieren (mitgelieferter Text), während der --prompt beantwortet wird, und darauf warten.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="244"/>
        <source>A GGUF model to load (same as --model).</source>
        <translation>Ein zu ladendes GGUF-Modell (wie --model).</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::AppCompletionBackend</name>
    <message>
        <location filename="../../app/app_completion_backend.cpp" line="107"/>
        <source>The app&apos;s engine has shut down.</source>
        <translation>Die Engine der App wurde beendet.</translation>
    </message>
    <message>
        <location filename="../../app/app_completion_backend.cpp" line="122"/>
        <source>No model is loaded in PowerInfer Desktop. Load one in the app, then retry.</source>
        <translation>In PowerInfer Desktop ist kein Modell geladen. Laden Sie eines in der App und versuchen Sie es erneut.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::BackgroundCalibration</name>
    <message>
        <location filename="../../app/background_calibration.cpp" line="44"/>
        <source>%1 s left</source>
        <translation>noch %1 s</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="44"/>
        <source>%1 min %2 s left</source>
        <translation>noch %1 min %2 s</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="49"/>
        <source>calibrating %1 %</source>
        <translation>wird kalibriert: %1 %</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="50"/>
        <source>not calibrated</source>
        <translation>nicht kalibriert</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="50"/>
        <source>calibrated</source>
        <translation>kalibriert</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="54"/>
        <source>This build cannot calibrate models.</source>
        <translation>Diese Version kann keine Modelle kalibrieren.</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="56"/>
        <source>%1 is being calibrated; wait for it or cancel it.</source>
        <translation>%1 wird gerade kalibriert; warten oder abbrechen.</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="58"/>
        <source>%1 does not exist.</source>
        <translation>%1 existiert nicht.</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="66"/>
        <source>The calibration text could not be prepared in %1.</source>
        <translation>Der Kalibriertext konnte in %1 nicht vorbereitet werden.</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="73"/>
        <source>Starting…</source>
        <translation>Startet…</translation>
    </message>
    <message>
        <location filename="../../app/background_calibration.cpp" line="97"/>
        <source>Calibrated: the sidecar is next to the model.</source>
        <translation>Kalibriert: Das Sidecar liegt neben dem Modell.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::ChatController</name>
    <message>
        <location filename="../../app/chat_controller.cpp" line="916"/>
        <source>Copied to the clipboard</source>
        <translation>In die Zwischenablage kopiert</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="57"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="93"/>
        <source>%1 is downloaded and verified. Calibrate it for sparse inference (in the background; it runs dense meanwhile) from its row.</source>
        <translation>%1 ist heruntergeladen und geprüft. In seiner Zeile für sparse Inferenz kalibrieren (im Hintergrund; es läuft währenddessen dicht).</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="96"/>
        <source>%1 is downloaded and verified.</source>
        <translation>%1 ist heruntergeladen und geprüft.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="117"/>
        <source>%1 is calibrated: load it again to run it sparse.</source>
        <translation>%1 ist kalibriert: erneut laden, um es sparse laufen zu lassen.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="120"/>
        <source>%1 is calibrated.</source>
        <translation>%1 ist kalibriert.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="277"/>
        <source>Send a message first: the comparison replays the last one.</source>
        <translation>Senden Sie zuerst eine Nachricht: Der Vergleich spielt die letzte erneut ab.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="337"/>
        <location filename="../../app/chat_controller.cpp" line="392"/>
        <source>Wait for the reply to finish, or press Stop.</source>
        <translation>Warten Sie auf das Ende der Antwort oder drücken Sie Stopp.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="341"/>
        <location filename="../../app/chat_controller.cpp" line="394"/>
        <source>Load a model first: click the model name at the top.</source>
        <translation>Laden Sie zuerst ein Modell: Klicken Sie oben auf den Modellnamen.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="419"/>
        <source>Continue your previous reply exactly where it stopped, without repeating it.</source>
        <translation>Setze deine vorige Antwort genau dort fort, wo sie aufhörte, ohne sie zu wiederholen.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="479"/>
        <source>Stopped at the %1-token limit. Continue goes on from here; Max tokens in Chat settings sets the limit.</source>
        <translation>Beim Limit von %1 Tokens angehalten. „Fortsetzen“ macht hier weiter; „Max. Tokens“ in den Chat-Einstellungen legt das Limit fest.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="492"/>
        <source>%1 To make room, raise the context length in Chat settings, or start a new chat.</source>
        <translation>%1 Um Platz zu schaffen, die Kontextlänge in den Chat-Einstellungen erhöhen oder einen neuen Chat beginnen.</translation>
    </message>
    <message numerus="yes">
        <location filename="../../app/chat_controller.cpp" line="498"/>
        <source>The conversation is longer than the context (%1 tokens): the oldest %n message(s) were left out of this reply.</source>
        <translation>
            <numerusform>Die Unterhaltung ist länger als der Kontext (%1 Token): Die älteste Nachricht wurde bei dieser Antwort weggelassen.</numerusform>
            <numerusform>Die Unterhaltung ist länger als der Kontext (%1 Token): Die ältesten %n Nachrichten wurden bei dieser Antwort weggelassen.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="516"/>
        <source>The model could not reply: %1</source>
        <translation>Das Modell konnte nicht antworten: %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="544"/>
        <source>%1 cannot be loaded: %2</source>
        <translation>%1 kann nicht geladen werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="558"/>
        <source>%1 at %2</source>
        <translation>%1 auf %2</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="609"/>
        <source>%1 params</source>
        <translation>%1 Parameter</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="612"/>
        <source>remote server (OpenAI-compatible)</source>
        <translation>entfernter Server (OpenAI-kompatibel)</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="614"/>
        <source>sparse sidecar</source>
        <translation>Sparse-Sidecar</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="616"/>
        <source>no sidecar</source>
        <translation>kein Sidecar</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="648"/>
        <source>Could not load %1 (%2). Still using %3.</source>
        <translation>%1 konnte nicht geladen werden (%2). Weiterhin wird %3 verwendet.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="665"/>
        <source>There is no file at %1. Check the path, or choose a model with the model name at the top.</source>
        <translation>Unter %1 gibt es keine Datei. Den Pfad prüfen oder oben über den Modellnamen ein Modell wählen.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="696"/>
        <source>Exported to %1</source>
        <translation>Exportiert nach %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="698"/>
        <location filename="../../app/chat_controller.cpp" line="862"/>
        <source>Could not export to %1: %2</source>
        <translation>Export nach %1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="722"/>
        <source>Export conversation</source>
        <translation>Unterhaltung exportieren</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="724"/>
        <location filename="../../app/chat_controller.cpp" line="733"/>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="724"/>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="731"/>
        <source>Export all conversations</source>
        <translation>Alle Unterhaltungen exportieren</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="739"/>
        <source>Import conversations</source>
        <translation>Unterhaltungen importieren</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="740"/>
        <source>JSON exports (*.json)</source>
        <translation>JSON-Exporte (*.json)</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="746"/>
        <source>Open a GGUF model</source>
        <translation>Ein GGUF-Modell öffnen</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="747"/>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF-Modelle (*.gguf);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="756"/>
        <source>Asking %1 for its models…</source>
        <translation>Frage %1 nach seinen Modellen…</translation>
    </message>
    <message numerus="yes">
        <location filename="../../app/chat_controller.cpp" line="773"/>
        <source>%n model(s) on this server.</source>
        <translation>
            <numerusform>%n Modell auf diesem Server.</numerusform>
            <numerusform>%n Modelle auf diesem Server.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="802"/>
        <source>No API key.</source>
        <translation>Kein API-Schlüssel.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="803"/>
        <source>The API key is kept in the OS keychain.</source>
        <translation>Der API-Schlüssel wird im Schlüsselbund des Systems verwahrt.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="811"/>
        <source>Connected to %1.</source>
        <translation>Verbunden mit %1.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="822"/>
        <source>Models folder: %1</source>
        <translation>Modellordner: %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="827"/>
        <source>Drop a .gguf model file, a folder of models, or an https link to a .gguf.</source>
        <translation>Eine .gguf-Modelldatei, einen Ordner mit Modellen oder einen https-Link zu einer .gguf-Datei ablegen.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="833"/>
        <source>Choose the models folder</source>
        <translation>Modellordner wählen</translation>
    </message>
    <message numerus="yes">
        <location filename="../../app/chat_controller.cpp" line="860"/>
        <source>Exported %n conversation(s) to %1</source>
        <translation>
            <numerusform>%n Unterhaltung nach %1 exportiert</numerusform>
            <numerusform>%n Unterhaltungen nach %1 exportiert</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="872"/>
        <location filename="../../app/chat_controller.cpp" line="878"/>
        <source>Could not import %1: %2</source>
        <translation>%1 konnte nicht importiert werden: %2</translation>
    </message>
    <message numerus="yes">
        <location filename="../../app/chat_controller.cpp" line="895"/>
        <source>Imported %n conversation(s)</source>
        <translation>
            <numerusform>%n Unterhaltung importiert</numerusform>
            <numerusform>%n Unterhaltungen importiert</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="902"/>
        <source>memory: load a model to see the cost</source>
        <translation>Speicher: ein Modell laden, um den Bedarf zu sehen</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="903"/>
        <source>KV cache: %1 of memory</source>
        <translation>KV-Cache: %1 Speicher</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="905"/>
        <source> per conversation; the %1 most recent keep theirs, so going back to one reads only its new turn</source>
        <translation> je Unterhaltung; die %1 jüngsten behalten ihren, sodass die Rückkehr zu einer nur ihren neuen Zug liest</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="909"/>
        <source> · the model was trained on %1 tokens: longer contexts are capped there</source>
        <translation> · das Modell wurde mit %1 Token trainiert: längere Kontexte werden dort begrenzt</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::ChatStore</name>
    <message>
        <location filename="../../app/chat_store.cpp" line="199"/>
        <source>The conversation database is not open.</source>
        <translation>Die Datenbank der Unterhaltungen ist nicht geöffnet.</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="203"/>
        <source>Database error: %1</source>
        <translation>Datenbankfehler: %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="213"/>
        <source>Cannot create the data folder %1. Check its permissions or pass --data-dir with a writable folder.</source>
        <translation>Der Datenordner %1 kann nicht angelegt werden. Prüfen Sie die Berechtigungen oder geben Sie mit --data-dir einen beschreibbaren Ordner an.</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="223"/>
        <source>Cannot open the conversation database %1: %2</source>
        <translation>Die Datenbank der Unterhaltungen %1 kann nicht geöffnet werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="236"/>
        <source>The conversation database %1 was written by a newer version of PowerInfer Desktop (schema %2; this version understands up to %3). Update the app, or start it with --data-dir pointing to another folder.</source>
        <translation>Die Datenbank der Unterhaltungen %1 wurde von einer neueren Version von PowerInfer Desktop geschrieben (Schema %2; diese Version versteht bis %3). Aktualisieren Sie die App oder starten Sie sie mit --data-dir und einem anderen Ordner.</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="257"/>
        <source>Cannot prepare the conversation database %1: %2</source>
        <translation>Die Datenbank der Unterhaltungen %1 kann nicht vorbereitet werden: %2</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::DownloadCatalog</name>
    <message>
        <location filename="../../app/download_catalog.cpp" line="164"/>
        <source>The model catalog %1 cannot be read: %2</source>
        <translation>Der Modellkatalog %1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="254"/>
        <source>RAM %1 (%2 available)</source>
        <translation>RAM %1 (%2 verfügbar)</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="255"/>
        <source>GPU: %1, %2 free</source>
        <translation>GPU: %1, %2 frei</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="256"/>
        <source>no GPU: models run on the CPU</source>
        <translation>keine GPU: Modelle laufen auf der CPU</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="258"/>
        <source>measuring memory bandwidth…</source>
        <translation>Speicherbandbreite wird gemessen…</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="260"/>
        <source>memory bandwidth %1/s (measured)</source>
        <translation>Speicherbandbreite %1/s (gemessen)</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="263"/>
        <source>decode %1/s of weights (measured)</source>
        <translation>Dekodieren %1/s an Gewichten (gemessen)</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="266"/>
        <source>decode probe failed: %1</source>
        <translation>Dekodier-Messung fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="267"/>
        <source>context %1 tokens</source>
        <translation>Kontext %1 Token</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="317"/>
        <source>about %1 (size approximate)</source>
        <translation>etwa %1 (Größe ungefähr)</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="335"/>
        <source>The engine does not run the %1 architecture yet.</source>
        <translation>Die Engine unterstützt die Architektur %1 noch nicht.</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="411"/>
        <source>No such catalog entry.</source>
        <translation>Diesen Katalogeintrag gibt es nicht.</translation>
    </message>
    <message>
        <location filename="../../app/download_catalog.cpp" line="426"/>
        <source>Downloads are not available.</source>
        <translation>Downloads sind nicht verfügbar.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::EngineWorker</name>
    <message>
        <location filename="../../app/engine_worker.cpp" line="118"/>
        <source>Loading was cancelled.</source>
        <translation>Das Laden wurde abgebrochen.</translation>
    </message>
    <message>
        <location filename="../../app/engine_worker.cpp" line="184"/>
        <location filename="../../app/engine_worker.cpp" line="332"/>
        <source>No model is loaded. Choose a model first.</source>
        <translation>Kein Modell geladen. Wählen Sie zuerst ein Modell.</translation>
    </message>
    <message>
        <location filename="../../app/engine_worker.cpp" line="294"/>
        <source>Calibration was cancelled.</source>
        <translation>Die Kalibrierung wurde abgebrochen.</translation>
    </message>
    <message>
        <location filename="../../app/engine_worker.cpp" line="324"/>
        <source>no placement preview in this build</source>
        <translation>keine Platzierungsvorschau in diesem Build</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::LocalApiServer</name>
    <message>
        <location filename="../../app/local_api_server.cpp" line="54"/>
        <source>The local API server could not start: %1. Choose another port.</source>
        <translation>Der lokale API-Server konnte nicht starten: %1. Wählen Sie einen anderen Port.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::ModelDownloads</name>
    <message>
        <location filename="../../app/model_downloader.cpp" line="333"/>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="337"/>
        <source>%1/s</source>
        <translation>%1/s</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="450"/>
        <source>Unfinished from last time: resume continues at %1.</source>
        <translation>Vom letzten Mal unfertig: Fortsetzen macht bei %1 weiter.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="515"/>
        <source>There is no such download.</source>
        <translation>Diesen Download gibt es nicht.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="521"/>
        <source>&quot;%1&quot; cannot be a file name: use letters, digits, spaces, dots and dashes, without / \ : * ? &quot; &lt; &gt; |.</source>
        <translation>„%1“ kann kein Dateiname sein: Buchstaben, Ziffern, Leerzeichen, Punkte und Bindestriche verwenden, ohne / \ : * ? &quot; &lt; &gt; |.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="532"/>
        <source>%1 is already in the models folder: %2 is free.</source>
        <translation>%1 ist schon im Modellordner: %2 ist frei.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="543"/>
        <source>Cannot rename %1 to %2 in %3: check that the folder is writable.</source>
        <translation>%1 kann in %3 nicht in %2 umbenannt werden: prüfen, ob der Ordner beschreibbar ist.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="552"/>
        <source>Renamed to %1.</source>
        <translation>Umbenannt in %1.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="609"/>
        <source>The link does not end in a .gguf file name (%1): paste the link of the model file itself.</source>
        <translation>Der Link endet nicht auf einen .gguf-Dateinamen (%1): den Link der Modelldatei selbst einfügen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="617"/>
        <source>The SHA-256 must be 64 hexadecimal digits (got &quot;%1&quot;).</source>
        <translation>Die SHA-256 muss aus 64 Hexadezimalziffern bestehen (erhalten: „%1“).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="621"/>
        <source>The models folder %1 cannot be created: choose another one.</source>
        <translation>Der Modellordner %1 kann nicht angelegt werden: einen anderen wählen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="635"/>
        <location filename="../../app/model_downloader.cpp" line="650"/>
        <source>%1 is already being downloaded.</source>
        <translation>%1 wird bereits heruntergeladen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="660"/>
        <source>%1 is already in the models folder (%2): delete it there first to download it again.</source>
        <translation>%1 liegt bereits im Modellordner (%2): dort zuerst löschen, um es erneut herunterzuladen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="677"/>
        <source>Resuming at %1.</source>
        <translation>Wird bei %1 fortgesetzt.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="779"/>
        <location filename="../../app/model_downloader.cpp" line="938"/>
        <source>Not enough disk space in %1: %2 still to download, %3 free. Free some space or choose another models folder.</source>
        <translation>Nicht genug Speicherplatz in %1: noch %2 herunterzuladen, %3 frei. Platz schaffen oder einen anderen Modellordner wählen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="792"/>
        <source>Paused at %1.</source>
        <translation>Pausiert bei %1.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="804"/>
        <source>%1 Resuming at %2 (try %3 of %4).</source>
        <translation>%1 Wird bei %2 fortgesetzt (Versuch %3 von %4).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="839"/>
        <source>Cannot write %1: %2. Choose another models folder.</source>
        <translation>%1 kann nicht geschrieben werden: %2. Einen anderen Modellordner wählen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="902"/>
        <source>The server sent another part of the file than asked for.</source>
        <translation>Der Server hat einen anderen Teil der Datei gesendet als angefragt.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="905"/>
        <source>The server&apos;s partial answer did not match: the download restarted from zero.</source>
        <translation>Die Teilantwort des Servers passte nicht: Der Download begann von vorn.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="918"/>
        <source>The server does not support resuming (or the file changed there): the download restarted from zero.</source>
        <translation>Der Server unterstützt kein Fortsetzen (oder die Datei hat sich dort geändert): Der Download begann von vorn.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="960"/>
        <source>Writing %1 failed: %2 (is the disk full?). Free some space and resume.</source>
        <translation>Schreiben von %1 fehlgeschlagen: %2 (ist der Datenträger voll?). Platz schaffen und fortsetzen.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="994"/>
        <source>%1 redirected to a plain http address (%2): refused, the file could be altered on the way.</source>
        <translation>%1 leitete auf eine einfache http-Adresse um (%2): abgelehnt, die Datei könnte unterwegs verändert werden.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1009"/>
        <source>The connection to %1 dropped before the file was complete.</source>
        <translation>Die Verbindung zu %1 brach ab, bevor die Datei vollständig war.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1017"/>
        <source>%1 redirected more than %2 times: giving up.</source>
        <translation>%1 leitete mehr als %2-mal um: Abbruch.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1031"/>
        <source>Cannot read the downloaded file %1: %2</source>
        <translation>Die heruntergeladene Datei %1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1037"/>
        <source>The downloaded file is damaged or not the one expected: its SHA-256 is %1, expected %2. It was deleted: download it again, or check the checksum.</source>
        <translation>Die heruntergeladene Datei ist beschädigt oder nicht die erwartete: Ihre SHA-256 ist %1, erwartet %2. Sie wurde gelöscht: erneut herunterladen oder die Prüfsumme kontrollieren.</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1045"/>
        <source>The downloaded file is not a GGUF model (it does not start with &quot;GGUF&quot;), so it was deleted. Check that the link points to the .gguf file itself (on Hugging Face the /resolve/ link, not the /blob/ page).</source>
        <translation>Die heruntergeladene Datei ist kein GGUF-Modell (sie beginnt nicht mit „GGUF“) und wurde gelöscht. Prüfen, dass der Link auf die .gguf-Datei selbst zeigt (auf Hugging Face der /resolve/-Link, nicht die /blob/-Seite).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1070"/>
        <source>%1 was already in the models folder: saved as %2 (rename it here).</source>
        <translation>%1 war schon im Modellordner: als %2 gespeichert (hier umbenennen).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1078"/>
        <source>Cannot move the verified file into %1: %2</source>
        <translation>Die geprüfte Datei kann nicht nach %1 verschoben werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1089"/>
        <source>No SHA-256 was known for this file: it is a GGUF file but could not be verified (SHA-256 %1).</source>
        <translation>Für diese Datei war keine SHA-256 bekannt: Sie ist eine GGUF-Datei, konnte aber nicht geprüft werden (SHA-256 %1).</translation>
    </message>
    <message>
        <location filename="../../app/model_downloader.cpp" line="1092"/>
        <source>SHA-256 verified (%1).</source>
        <translation>SHA-256 geprüft (%1).</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::RemoteChatClient</name>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="34"/>
        <source>Enter the server&apos;s address, e.g. http://192.168.1.20:8080/v1.</source>
        <translation>Die Adresse des Servers eingeben, z. B. http://192.168.1.20:8080/v1.</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="72"/>
        <location filename="../../app/remote_chat_client.cpp" line="200"/>
        <source>Cannot reach %1: %2</source>
        <translation>%1 ist nicht erreichbar: %2</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="83"/>
        <source>%1 lists no models at /v1/models.</source>
        <translation>%1 nennt unter /v1/models keine Modelle.</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="201"/>
        <source>The connection to %1 was lost mid-reply (%2); the text received so far is kept.</source>
        <translation>Die Verbindung zu %1 brach mitten in der Antwort ab (%2); der bisher empfangene Text bleibt erhalten.</translation>
    </message>
    <message>
        <location filename="../../app/remote_chat_client.cpp" line="205"/>
        <source>the stream ended without [DONE]</source>
        <translation>der Stream endete ohne [DONE]</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::SparseController</name>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="152"/>
        <source>%1 cannot be read: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="160"/>
        <source>%1 is not a JSON object (%2); defaults are used</source>
        <translation>%1 ist kein JSON-Objekt (%2); es werden Standardwerte verwendet</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="185"/>
        <source>%1: invalid values for %2 (defaults used)</source>
        <translation>%1: ungültige Werte für %2 (Standardwerte verwendet)</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="224"/>
        <source>cannot save %1: %2</source>
        <translation>%1 kann nicht gespeichert werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="283"/>
        <source>Comparing dense and sparse on this machine…</source>
        <translation>Dicht und sparse werden auf diesem Rechner verglichen…</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="291"/>
        <source>The dense/sparse comparison failed: %1</source>
        <translation>Der Vergleich dicht/sparse ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="298"/>
        <source>sparse %1 tok/s, dense %2 tok/s, %3 % of the tokens the same</source>
        <translation>sparse %1 Token/s, dicht %2 Token/s, %3 % der Token gleich</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="315"/>
        <source>Sparse recommended and on: %1.</source>
        <translation>Sparse empfohlen und eingeschaltet: %1.</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="316"/>
        <source>Sparse recommended: %1. It is off; the switch above turns it on.</source>
        <translation>Sparse empfohlen: %1. Es ist aus; der Schalter oben schaltet es ein.</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="321"/>
        <source>Dense recommended: %1. Sparse is on by your choice.</source>
        <translation>Dicht empfohlen: %1. Sparse ist nach Ihrer Wahl eingeschaltet.</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="323"/>
        <source>Dense recommended: %1. Sparse was switched off; the tuning panel switches it back on.</source>
        <translation>Dicht empfohlen: %1. Sparse wurde ausgeschaltet; im Tuning-Bereich lässt es sich wieder einschalten.</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="444"/>
        <source>Preparing the corpus…</source>
        <translation>Korpus wird vorbereitet…</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="452"/>
        <source>There are no conversations to calibrate on yet.</source>
        <translation>Es gibt noch keine Unterhaltungen, mit denen kalibriert werden kann.</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="453"/>
        <source>The corpus could not be prepared.</source>
        <translation>Der Korpus konnte nicht vorbereitet werden.</translation>
    </message>
</context>
</TS>
