<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE" sourcelanguage="en">
<context>
    <name>CalibrateDialog</name>
    <message>
        <location filename="../CalibrateDialog.qml" line="16"/>
        <source>Calibrate for sparse inference</source>
        <translation>Für sparse Inferenz kalibrieren</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="33"/>
        <source>Runs the model over a text, records which FFN neurons fire and trains a small predictor per layer. A few minutes for a small model.</source>
        <translation>Lässt das Modell einen Text verarbeiten, zeichnet auf, welche FFN-Neuronen feuern, und trainiert je Schicht einen kleinen Prädiktor. Bei einem kleinen Modell dauert das einige Minuten.</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="43"/>
        <source>Bundled text (Frankenstein, public domain)</source>
        <translation>Mitgelieferter Text (Frankenstein, gemeinfrei)</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="50"/>
        <source>A text file</source>
        <translation>Eine Textdatei</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="55"/>
        <source>Choose…</source>
        <translation>Auswählen…</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="62"/>
        <source>My conversations</source>
        <translation>Meine Unterhaltungen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="68"/>
        <location filename="../CalibrateDialog.qml" line="85"/>
        <source>Target sparsity</source>
        <translation>Ziel-Sparsity</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="95"/>
        <source>Calibration progress</source>
        <translation>Fortschritt der Kalibrierung</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="100"/>
        <source>%1% · %2</source>
        <translation>%1 % · %2</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="102"/>
        <source>about %1 s left</source>
        <translation>noch etwa %1 s</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="103"/>
        <source>estimating…</source>
        <translation>wird geschätzt…</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="113"/>
        <source>Cancel calibration</source>
        <translation>Kalibrierung abbrechen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="113"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="118"/>
        <source>Calibrate</source>
        <translation>Kalibrieren</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="138"/>
        <source>Choose a text corpus</source>
        <translation>Textkorpus auswählen</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="139"/>
        <source>Text (*.txt *.md)</source>
        <translation>Text (*.txt *.md)</translation>
    </message>
    <message>
        <location filename="../CalibrateDialog.qml" line="139"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
</context>
<context>
    <name>ChatHeader</name>
    <message>
        <location filename="../ChatHeader.qml" line="33"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="44"/>
        <source>Model: %1. Choose a model</source>
        <translation>Modell: %1. Modell wählen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="67"/>
        <source>Choose a model</source>
        <translation>Modell wählen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="91"/>
        <source>Sparse engine tuning</source>
        <translation>Feinabstimmung der Sparse-Engine</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="98"/>
        <source>Hide metrics</source>
        <translation>Messwerte ausblenden</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="98"/>
        <source>Show metrics</source>
        <translation>Messwerte anzeigen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="107"/>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="113"/>
        <source>More actions</source>
        <translation>Weitere Aktionen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="118"/>
        <source>Regenerate last reply</source>
        <translation>Letzte Antwort neu erzeugen</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="124"/>
        <source>Export as Markdown…</source>
        <translation>Als Markdown exportieren…</translation>
    </message>
    <message>
        <location filename="../ChatHeader.qml" line="129"/>
        <source>Export as JSON…</source>
        <translation>Als JSON exportieren…</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <location filename="../ChatView.qml" line="43"/>
        <source>Messages</source>
        <translation>Nachrichten</translation>
    </message>
    <message>
        <location filename="../ChatView.qml" line="80"/>
        <source>Jump to the latest message</source>
        <translation>Zur neuesten Nachricht springen</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <location filename="../CodeBlock.qml" line="36"/>
        <source>code</source>
        <translation>Code</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="47"/>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="47"/>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="48"/>
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
    <message>
        <location filename="../CodeBlock.qml" line="84"/>
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
        <location filename="../ConversationDelegate.qml" line="103"/>
        <source>Rename</source>
        <translation>Umbenennen</translation>
    </message>
    <message>
        <location filename="../ConversationDelegate.qml" line="107"/>
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
    <name>ExportDialog</name>
    <message>
        <location filename="../ExportDialog.qml" line="21"/>
        <source>Export conversation</source>
        <translation>Unterhaltung exportieren</translation>
    </message>
    <message>
        <location filename="../ExportDialog.qml" line="25"/>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <location filename="../ExportDialog.qml" line="25"/>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <location filename="../Main.qml" line="20"/>
        <source>PowerInfer Desktop</source>
        <translation>PowerInfer Desktop</translation>
    </message>
    <message>
        <location filename="../Main.qml" line="19"/>
        <source>%1 — PowerInfer</source>
        <translation>%1 — PowerInfer</translation>
    </message>
</context>
<context>
    <name>MessageDelegate</name>
    <message>
        <location filename="../MessageDelegate.qml" line="29"/>
        <source>You</source>
        <translation>Sie</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="29"/>
        <source>Assistant</source>
        <translation>Assistent</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="126"/>
        <source>Reply failed</source>
        <translation>Antwort fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="127"/>
        <source>Interrupted</source>
        <translation>Unterbrochen</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="149"/>
        <source>Copy message</source>
        <translation>Nachricht kopieren</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="158"/>
        <source>Edit and resend</source>
        <translation>Bearbeiten und erneut senden</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="168"/>
        <source>Regenerate reply</source>
        <translation>Antwort neu erzeugen</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="178"/>
        <source>%1 tokens · %2 tok/s</source>
        <translation>%1 Tokens · %2 tok/s</translation>
    </message>
    <message>
        <location filename="../MessageDelegate.qml" line="125"/>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
</context>
<context>
    <name>MetricsPanel</name>
    <message>
        <location filename="../MetricsPanel.qml" line="26"/>
        <location filename="../MetricsPanel.qml" line="78"/>
        <source>Engine metrics</source>
        <translation>Messwerte der Engine</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="87"/>
        <source>Tune the sparse engine</source>
        <translation>Sparse-Engine abstimmen</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="107"/>
        <source>Dense mode (sparse switched off)</source>
        <translation>Dichter Modus (sparse ausgeschaltet)</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="107"/>
        <source>Running dense</source>
        <translation>Läuft dicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="121"/>
        <source>Calibrate…</source>
        <translation>Kalibrieren…</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="132"/>
        <source>decode tok/s</source>
        <translation>Decode tok/s</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="136"/>
        <source>prompt tok/s</source>
        <translation>Prompt tok/s</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="142"/>
        <source>hot-neuron hits</source>
        <translation>Hot-Neuron-Treffer</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="146"/>
        <source>FFN sparsity</source>
        <translation>FFN-Sparsity</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="150"/>
        <location filename="../MetricsPanel.qml" line="178"/>
        <source>predictor recall</source>
        <translation>Prädiktor-Recall</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="154"/>
        <source>ms / token</source>
        <translation>ms / Token</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="160"/>
        <source>Hit rate, last %1 tokens</source>
        <translation>Trefferquote, letzte %1 Tokens</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="172"/>
        <source>Hot-neuron hit rate over the last tokens</source>
        <translation>Hot-Neuron-Trefferquote über die letzten Tokens</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="177"/>
        <source>hit rate</source>
        <translation>Trefferquote</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="200"/>
        <source>Active per layer</source>
        <translation>Aktiv je Schicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="201"/>
        <source>Hits per layer</source>
        <translation>Treffer je Schicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="207"/>
        <source>Active</source>
        <translation>Aktiv</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="207"/>
        <source>Hit rate</source>
        <translation>Trefferquote</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="208"/>
        <source>Heatmap value</source>
        <translation>Heatmap-Wert</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="224"/>
        <source>Per-layer heatmap: %1 layers by the last %2 tokens</source>
        <translation>Heatmap je Schicht: %1 Schichten über die letzten %2 Tokens</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="228"/>
        <source>layer 0 at the top · newest token at the right · colour %1 → %2</source>
        <translation>Schicht 0 oben · neuestes Token rechts · Farbe %1 → %2</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="237"/>
        <source>Time per token</source>
        <translation>Zeit pro Token</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="242"/>
        <source>predictor / device / CPU</source>
        <translation>Prädiktor / Gerät / CPU</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="245"/>
        <source>predictor</source>
        <translation>Prädiktor</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="246"/>
        <source>device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="247"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="252"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="257"/>
        <source>CPU device — simulated budget</source>
        <translation>CPU-Gerät — simuliertes Budget</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="259"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="263"/>
        <source>dense</source>
        <translation>dicht</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="264"/>
        <source>hot</source>
        <translation>hot</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="265"/>
        <source>cache</source>
        <translation>Cache</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="266"/>
        <source>KV</source>
        <translation>KV</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="267"/>
        <source>predictors</source>
        <translation>Prädiktoren</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="274"/>
        <source>RAM</source>
        <translation>RAM</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="275"/>
        <source>The simulated device&apos;s parts live in RAM too.</source>
        <translation>Die Teile des simulierten Geräts liegen ebenfalls im RAM.</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="278"/>
        <source>model weights</source>
        <translation>Modellgewichte</translation>
    </message>
    <message>
        <location filename="../MetricsPanel.qml" line="279"/>
        <source>device (simulated)</source>
        <translation>Gerät (simuliert)</translation>
    </message>
</context>
<context>
    <name>ModelBanner</name>
    <message>
        <location filename="../ModelBanner.qml" line="38"/>
        <source>Loading %1… %2%</source>
        <translation>%1 wird geladen… %2 %</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="41"/>
        <source>Could not load the model: %1</source>
        <translation>Das Modell konnte nicht geladen werden: %1</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="43"/>
        <source>No model loaded. Choose a GGUF model to start chatting.</source>
        <translation>Kein Modell geladen. Wählen Sie ein GGUF-Modell, um zu chatten.</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="52"/>
        <source>Model loading progress</source>
        <translation>Ladefortschritt des Modells</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="71"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../ModelBanner.qml" line="76"/>
        <source>Choose model</source>
        <translation>Modell wählen</translation>
    </message>
</context>
<context>
    <name>ModelDelegate</name>
    <message>
        <location filename="../ModelDelegate.qml" line="22"/>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <location filename="../ModelDelegate.qml" line="82"/>
        <source>sparse sidecar</source>
        <translation>Sparse-Sidecar</translation>
    </message>
    <message>
        <location filename="../ModelDelegate.qml" line="82"/>
        <source>dense</source>
        <translation>dicht</translation>
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
        <location filename="../ModelPicker.qml" line="138"/>
        <source>Choose the models folder</source>
        <translation>Modellordner wählen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="71"/>
        <source>Scan the folder again</source>
        <translation>Ordner erneut durchsuchen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="102"/>
        <source>Looking for models…</source>
        <translation>Modelle werden gesucht…</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="103"/>
        <source>No .gguf models in this folder. Open a file, or fetch the default model with scripts/fetch-model.</source>
        <translation>Keine .gguf-Modelle in diesem Ordner. Öffnen Sie eine Datei oder laden Sie das Standardmodell mit scripts/fetch-model herunter.</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="111"/>
        <source>Open file…</source>
        <translation>Datei öffnen…</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="129"/>
        <source>Open a GGUF model</source>
        <translation>GGUF-Modell öffnen</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="130"/>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF-Modelle (*.gguf)</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="130"/>
        <source>All files (*)</source>
        <translation>Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../ModelPicker.qml" line="40"/>
        <location filename="../ModelPicker.qml" line="120"/>
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
</context>
<context>
    <name>SettingsDrawer</name>
    <message>
        <location filename="../SettingsDrawer.qml" line="82"/>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="90"/>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="96"/>
        <location filename="../SettingsDrawer.qml" line="107"/>
        <source>System prompt</source>
        <translation>Systemanweisung</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="103"/>
        <source>For this conversation, e.g. “You are a concise assistant.”</source>
        <translation>Für diese Unterhaltung, z. B. „Du bist ein knapper Assistent.“</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="117"/>
        <source>Sampling</source>
        <translation>Sampling</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="120"/>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="128"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="138"/>
        <location filename="../SettingsDrawer.qml" line="147"/>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="154"/>
        <location filename="../SettingsDrawer.qml" line="164"/>
        <source>Max tokens</source>
        <translation>Max. Tokens</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="169"/>
        <source>Reset to defaults</source>
        <translation>Auf Standardwerte zurücksetzen</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="174"/>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="182"/>
        <source>Follow the system</source>
        <translation>Wie das System</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="183"/>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="184"/>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="186"/>
        <source>Theme</source>
        <translation>Farbschema</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="192"/>
        <location filename="../SettingsDrawer.qml" line="205"/>
        <source>Local API server</source>
        <translation>Lokaler API-Server</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="197"/>
        <source>Serve the loaded model to other programs on this computer (OpenAI-compatible)</source>
        <translation>Das geladene Modell anderen Programmen auf diesem Computer bereitstellen (OpenAI-kompatibel)</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="212"/>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="223"/>
        <source>API server port</source>
        <translation>Port des API-Servers</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="240"/>
        <source>API server address</source>
        <translation>Adresse des API-Servers</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="240"/>
        <source>API server error</source>
        <translation>Fehler des API-Servers</translation>
    </message>
    <message>
        <location filename="../SettingsDrawer.qml" line="245"/>
        <source>Copy the address</source>
        <translation>Adresse kopieren</translation>
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
        <location filename="../StatusBar.qml" line="45"/>
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="46"/>
        <source>Speed: %1</source>
        <translation>Geschwindigkeit: %1</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="51"/>
        <source>Context %1 / %2</source>
        <translation>Kontext %1 / %2</translation>
    </message>
    <message>
        <location filename="../StatusBar.qml" line="59"/>
        <source>Device: %1</source>
        <translation>Gerät: %1</translation>
    </message>
</context>
<context>
    <name>TuningPanel</name>
    <message>
        <location filename="../TuningPanel.qml" line="80"/>
        <source>Default %1.</source>
        <translation>Standard: %1.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="101"/>
        <source>Sparse engine tuning</source>
        <translation>Feinabstimmung der Sparse-Engine</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="109"/>
        <source>Close tuning</source>
        <translation>Feinabstimmung schließen</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="114"/>
        <source>Changes apply before the next token, even mid-reply.</source>
        <translation>Änderungen gelten ab dem nächsten Token, auch mitten in einer Antwort.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="123"/>
        <location filename="../TuningPanel.qml" line="132"/>
        <source>Sparse inference</source>
        <translation>Sparse Inferenz</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="138"/>
        <source>Off = dense, the exact reference path.</source>
        <translation>Aus = dicht, der exakte Referenzpfad.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="139"/>
        <source>This model has no sidecar yet, so it runs dense.</source>
        <translation>Dieses Modell hat noch kein Sidecar und läuft daher dicht.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="148"/>
        <source>Calibrate…</source>
        <translation>Kalibrieren…</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="154"/>
        <source>Hot-neuron threshold</source>
        <translation>Hot-Neuron-Schwelle</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="155"/>
        <source>Share of each layer&apos;s activation mass kept on the device.</source>
        <translation>Anteil der Aktivierungsmasse jeder Schicht, der auf dem Gerät gehalten wird.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="162"/>
        <source>Predictor threshold</source>
        <translation>Prädiktor-Schwelle</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="163"/>
        <source>Probability above which a neuron is computed; lower = safer, slower.</source>
        <translation>Wahrscheinlichkeit, ab der ein Neuron berechnet wird; niedriger = sicherer, langsamer.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="170"/>
        <source>Prefetch depth</source>
        <translation>Prefetch-Tiefe</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="171"/>
        <source>Layers ahead whose predicted cold neurons are staged.</source>
        <translation>Anzahl der vorausliegenden Schichten, deren vorhergesagte kalte Neuronen bereitgestellt werden.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="178"/>
        <source>Cache window</source>
        <translation>Cache-Fenster</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="179"/>
        <source>Tokens a cold neuron stays cached on the device after firing.</source>
        <translation>Tokens, die ein kaltes Neuron nach dem Feuern im Gerätecache bleibt.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="187"/>
        <source>Device budget (MiB)</source>
        <translation>Gerätebudget (MiB)</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="200"/>
        <location filename="../TuningPanel.qml" line="201"/>
        <source>auto</source>
        <translation>auto</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="200"/>
        <location filename="../TuningPanel.qml" line="201"/>
        <source>none</source>
        <translation>keins</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="202"/>
        <source>Device memory budget in MiB</source>
        <translation>Gerätespeicher-Budget in MiB</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="207"/>
        <source>What the placement may use on the device: auto = free memory minus 512 MiB, none = everything on the CPU.</source>
        <translation>Was die Platzierung auf dem Gerät belegen darf: auto = freier Speicher minus 512 MiB, keins = alles auf der CPU.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="229"/>
        <source>Placement preview</source>
        <translation>Vorschau der Platzierung</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="237"/>
        <source>%L1 of %L2 neurons hot · %3 MiB on the device%4</source>
        <translation>%L1 von %L2 Neuronen hot · %3 MiB auf dem Gerät%4</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="240"/>
        <source> (budget-limited)</source>
        <translation> (durch Budget begrenzt)</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="242"/>
        <source>No preview yet.</source>
        <translation>Noch keine Vorschau.</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="251"/>
        <source>Saved in %1</source>
        <translation>Gespeichert in %1</translation>
    </message>
    <message>
        <location filename="../TuningPanel.qml" line="260"/>
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
        <location filename="../../app/desktop_app.cpp" line="51"/>
        <source>Chat with local language models using sparse hybrid GPU/CPU inference.</source>
        <translation>Chatten Sie mit lokalen Sprachmodellen über sparse hybride GPU/CPU-Inferenz.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="57"/>
        <source>Folder for conversations and settings.</source>
        <translation>Ordner für Unterhaltungen und Einstellungen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="60"/>
        <source>GGUF model to load at start.</source>
        <translation>GGUF-Modell, das beim Start geladen wird.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="62"/>
        <source>Send this prompt in a new conversation.</source>
        <translation>Diesen Prompt in einer neuen Unterhaltung senden.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="65"/>
        <source>Save a window screenshot after the reply.</source>
        <translation>Nach der Antwort ein Bildschirmfoto des Fensters speichern.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="68"/>
        <source>Exit once the reply is complete.</source>
        <translation>Beenden, sobald die Antwort vollständig ist.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="70"/>
        <source>Colour theme: system, light or dark.</source>
        <translation>Farbschema: system, light oder dark.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="73"/>
        <source>Set a sparse-engine knob after loading (repeatable), e.g. hot_neuron_threshold=0.7; saved in the model&apos;s config.json.</source>
        <translation>Nach dem Laden einen Regler der Sparse-Engine setzen (wiederholbar), z. B. hot_neuron_threshold=0.7; wird in der config.json des Modells gespeichert.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="78"/>
        <source>Show the metrics panel.</source>
        <translation>Die Messwerte-Leiste anzeigen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="80"/>
        <source>Open the tuning panel.</source>
        <translation>Die Feinabstimmung öffnen.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="83"/>
        <source>Take the --screenshot mid-reply, after N tokens.</source>
        <translation>Das --screenshot-Bild mitten in der Antwort aufnehmen, nach N Tokens.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="86"/>
        <source>Calibrate the --model first (writes its sidecar): on the bundled text, your conversations, or a text file.</source>
        <translation>Das --model zuerst kalibrieren (schreibt sein Sidecar): mit dem mitgelieferten Text, Ihren Unterhaltungen oder einer Textdatei.</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="92"/>
        <source>Corpus tokens for --calibrate (default 20000).</source>
        <translation>Korpus-Tokens für --calibrate (Standard 20000).</translation>
    </message>
    <message>
        <location filename="../../app/desktop_app.cpp" line="95"/>
        <source>After the reply, replay the prompt through the dense and the sparse path and print the token agreement and speeds.</source>
        <translation>Nach der Antwort den Prompt über den dichten und den sparse Pfad erneut abspielen und Token-Übereinstimmung und Geschwindigkeiten ausgeben.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::AppCompletionBackend</name>
    <message>
        <location filename="../../app/app_completion_backend.cpp" line="106"/>
        <source>The app&apos;s engine has shut down.</source>
        <translation>Die Engine der App wurde beendet.</translation>
    </message>
    <message>
        <location filename="../../app/app_completion_backend.cpp" line="121"/>
        <source>No model is loaded in PowerInfer Desktop. Load one in the app, then retry.</source>
        <translation>In PowerInfer Desktop ist kein Modell geladen. Laden Sie eines in der App und versuchen Sie es erneut.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::ChatController</name>
    <message>
        <location filename="../../app/chat_controller.cpp" line="479"/>
        <source>Copied to the clipboard</source>
        <translation>In die Zwischenablage kopiert</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="26"/>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="184"/>
        <source>Send a message first: the comparison replays the last one.</source>
        <translation>Senden Sie zuerst eine Nachricht: Der Vergleich spielt die letzte erneut ab.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="227"/>
        <location filename="../../app/chat_controller.cpp" line="275"/>
        <source>Wait for the reply to finish, or press Stop.</source>
        <translation>Warten Sie auf das Ende der Antwort oder drücken Sie Stopp.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="231"/>
        <location filename="../../app/chat_controller.cpp" line="277"/>
        <source>Load a model first: click the model name at the top.</source>
        <translation>Laden Sie zuerst ein Modell: Klicken Sie oben auf den Modellnamen.</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="359"/>
        <source>The model could not reply: %1</source>
        <translation>Das Modell konnte nicht antworten: %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="422"/>
        <source>%1 params</source>
        <translation>%1 Parameter</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="425"/>
        <source>sparse sidecar</source>
        <translation>Sparse-Sidecar</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="427"/>
        <source>no sidecar</source>
        <translation>kein Sidecar</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="465"/>
        <source>Exported to %1</source>
        <translation>Exportiert nach %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_controller.cpp" line="467"/>
        <source>Could not export to %1: %2</source>
        <translation>Export nach %1 fehlgeschlagen: %2</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::ChatStore</name>
    <message>
        <location filename="../../app/chat_store.cpp" line="194"/>
        <source>The conversation database is not open.</source>
        <translation>Die Datenbank der Unterhaltungen ist nicht geöffnet.</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="198"/>
        <source>Database error: %1</source>
        <translation>Datenbankfehler: %1</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="208"/>
        <source>Cannot create the data folder %1. Check its permissions or pass --data-dir with a writable folder.</source>
        <translation>Der Datenordner %1 kann nicht angelegt werden. Prüfen Sie die Berechtigungen oder geben Sie mit --data-dir einen beschreibbaren Ordner an.</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="218"/>
        <source>Cannot open the conversation database %1: %2</source>
        <translation>Die Datenbank der Unterhaltungen %1 kann nicht geöffnet werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="231"/>
        <source>The conversation database %1 was written by a newer version of PowerInfer Desktop (schema %2; this version understands up to %3). Update the app, or start it with --data-dir pointing to another folder.</source>
        <translation>Die Datenbank der Unterhaltungen %1 wurde von einer neueren Version von PowerInfer Desktop geschrieben (Schema %2; diese Version versteht bis %3). Aktualisieren Sie die App oder starten Sie sie mit --data-dir und einem anderen Ordner.</translation>
    </message>
    <message>
        <location filename="../../app/chat_store.cpp" line="248"/>
        <source>Cannot prepare the conversation database %1: %2</source>
        <translation>Die Datenbank der Unterhaltungen %1 kann nicht vorbereitet werden: %2</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::EngineWorker</name>
    <message>
        <location filename="../../app/engine_worker.cpp" line="55"/>
        <location filename="../../app/engine_worker.cpp" line="80"/>
        <source>Loading was cancelled.</source>
        <translation>Das Laden wurde abgebrochen.</translation>
    </message>
    <message>
        <location filename="../../app/engine_worker.cpp" line="118"/>
        <location filename="../../app/engine_worker.cpp" line="240"/>
        <source>No model is loaded. Choose a model first.</source>
        <translation>Kein Modell geladen. Wählen Sie zuerst ein Modell.</translation>
    </message>
    <message>
        <location filename="../../app/engine_worker.cpp" line="216"/>
        <source>Calibration was cancelled.</source>
        <translation>Die Kalibrierung wurde abgebrochen.</translation>
    </message>
    <message>
        <location filename="../../app/engine_worker.cpp" line="232"/>
        <source>no placement preview in this build</source>
        <translation>keine Platzierungsvorschau in diesem Build</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::LocalApiServer</name>
    <message>
        <location filename="../../app/local_api_server.cpp" line="50"/>
        <source>The local API server could not start: %1. Choose another port.</source>
        <translation>Der lokale API-Server konnte nicht starten: %1. Wählen Sie einen anderen Port.</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::SparseController</name>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="103"/>
        <source>%1 cannot be read: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="111"/>
        <source>%1 is not a JSON object (%2); defaults are used</source>
        <translation>%1 ist kein JSON-Objekt (%2); es werden Standardwerte verwendet</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="138"/>
        <source>%1: invalid values for %2 (defaults used)</source>
        <translation>%1: ungültige Werte für %2 (Standardwerte verwendet)</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="164"/>
        <source>cannot save %1: %2</source>
        <translation>%1 kann nicht gespeichert werden: %2</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="285"/>
        <source>Preparing the corpus…</source>
        <translation>Korpus wird vorbereitet…</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="293"/>
        <source>There are no conversations to calibrate on yet.</source>
        <translation>Es gibt noch keine Unterhaltungen, mit denen kalibriert werden kann.</translation>
    </message>
    <message>
        <location filename="../../app/sparse_controller.cpp" line="294"/>
        <source>The corpus could not be prepared.</source>
        <translation>Der Korpus konnte nicht vorbereitet werden.</translation>
    </message>
</context>
</TS>
