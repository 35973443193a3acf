/** Page model of the assistant side panel; waits on its `data-run-status` and dialog DOM states. */
import type { Page } from 'playwright-core';

export class AssistantPanel {
  constructor(readonly page: Page) {}
  /** Type a message and send it with the keyboard (Ctrl+Enter). */
  async ask(text: string): Promise<void> {
    await this.page.locator('#assistant-text').fill(text);
    await this.page.locator('#assistant-text').press('Control+Enter');
  }
  async waitForStatus(status: 'running' | 'waiting_confirm' | 'finished' | 'error'): Promise<void> {
    await this.page.waitForSelector(`aside.assistant[data-run-status="${status}"]`, { state: 'attached' });
  }
  /** Wait for the confirm dialog and return its title and row count. */
  async confirmDialog(): Promise<{ title: string; rows: number }> {
    const d = this.page.locator('.confirm[role="dialog"]');
    await d.waitFor();
    return { title: (await d.locator('h3').textContent()) ?? '', rows: Number(await d.locator('[data-testid="confirm-rows"]').textContent()) };
  }
  async approve(): Promise<void> {
    await this.page.locator('.confirm').getByRole('button', { name: 'Approve' }).click();
  }
  async decline(): Promise<void> {
    await this.page.locator('.confirm').getByRole('button', { name: 'Decline' }).click();
  }
  async answer(): Promise<string> {
    return (await this.page.locator('.msg.assistant').last().textContent()) ?? '';
  }
  async toolStatuses(): Promise<{ tool: string | null; status: string | null }[]> {
    return this.page.locator('.tool-call').evaluateAll((els) => els.map((e) => ({ tool: e.getAttribute('data-tool'), status: e.getAttribute('data-status') })));
  }
}
