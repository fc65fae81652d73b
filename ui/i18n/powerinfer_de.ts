<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE" sourcelanguage="en">
<context>
    <name>Main</name>
    <message>
        <source>PowerInfer Desktop</source>
        <translation>PowerInfer Desktop</translation>
    </message>
    <message>
        <source>%1 — PowerInfer</source>
        <translation>%1 — PowerInfer</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <source>Recent</source>
        <translation>Zuletzt</translation>
    </message>
    <message>
        <source>Results</source>
        <translation>Ergebnisse</translation>
    </message>
    <message>
        <source>No conversation matches.</source>
        <translation>Keine passende Unterhaltung.</translation>
    </message>
    <message>
        <source>Your conversations will appear here.</source>
        <translation>Ihre Unterhaltungen erscheinen hier.</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>Unterhaltung löschen</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
</context>
<context>
    <name>ConversationDelegate</name>
    <message>
        <source>Rename</source>
        <translation>Umbenennen</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>Löschen…</translation>
    </message>
    <message>
        <source>Conversation actions</source>
        <translation>Aktionen zur Unterhaltung</translation>
    </message>
</context>
<context>
    <name>ChatHeader</name>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>Choose a model</source>
        <translation>Modell wählen</translation>
    </message>
    <message>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <source>More actions</source>
        <translation>Weitere Aktionen</translation>
    </message>
    <message>
        <source>Regenerate last reply</source>
        <translation>Letzte Antwort neu erzeugen</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Als Markdown exportieren…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>Als JSON exportieren…</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Load a model to start chatting</source>
        <translation>Laden Sie ein Modell, um zu chatten</translation>
    </message>
    <message>
        <source>Message %1…</source>
        <translation>Nachricht an %1…</translation>
    </message>
    <message>
        <source>Stop (Esc)</source>
        <translation>Stopp (Esc)</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>Senden (Eingabe)</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Enter to send · Shift+Enter for a new line</source>
        <translation>Eingabe sendet · Umschalt+Eingabe für neue Zeile</translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <source>How can I help?</source>
        <translation>Wie kann ich helfen?</translation>
    </message>
</context>
<context>
    <name>ModelBanner</name>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Choose model</source>
        <translation>Modell wählen</translation>
    </message>
</context>
<context>
    <name>MessageDelegate</name>
    <message>
        <source>Copy message</source>
        <translation>Nachricht kopieren</translation>
    </message>
    <message>
        <source>Edit and resend</source>
        <translation>Bearbeiten und erneut senden</translation>
    </message>
    <message>
        <source>Regenerate reply</source>
        <translation>Antwort neu erzeugen</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Angehalten</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation>Code kopieren</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Choose a model</source>
        <translation>Modell wählen</translation>
    </message>
    <message>
        <source>Open file…</source>
        <translation>Datei öffnen…</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Schließen</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Ordner</translation>
    </message>
</context>
<context>
    <name>SettingsDrawer</name>
    <message>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Systemanweisung</translation>
    </message>
    <message>
        <source>Sampling</source>
        <translation>Sampling</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>Max. Tokens</translation>
    </message>
    <message>
        <source>Reset to defaults</source>
        <translation>Auf Standardwerte zurücksetzen</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>Wie das System</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
</context>
<context>
    <name>StatusBar</name>
    <message>
        <source>No model</source>
        <translation>Kein Modell</translation>
    </message>
</context>
<context>
    <name>EditMessageDialog</name>
    <message>
        <source>Edit message</source>
        <translation>Nachricht bearbeiten</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Save and resend</source>
        <translation>Speichern und erneut senden</translation>
    </message>
</context>
<context>
    <name>ConfirmDialog</name>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
</context>
<context>
    <name>powerinfer::app::ChatController</name>
    <message>
        <source>Copied to the clipboard</source>
        <translation>In die Zwischenablage kopiert</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>Wait for the reply to finish, or press Stop.</source>
        <translation>Warten Sie auf das Ende der Antwort oder drücken Sie Stopp.</translation>
    </message>
    <message>
        <source>Load a model first: click the model name at the top.</source>
        <translation>Laden Sie zuerst ein Modell: Klicken Sie oben auf den Modellnamen.</translation>
    </message>
</context>
</TS>
